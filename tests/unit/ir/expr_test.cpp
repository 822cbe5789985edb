// Expression builders: integer folding, identities, structural equality, substitution.
#include "ir/expr.h"

#include <gtest/gtest.h>

#include "ir/printer.h"

namespace ansor {
namespace {

TEST(ExprTest, FoldsIntegerConstants) {
  EXPECT_TRUE(is_const_int(add(int_imm(2), int_imm(3)), 5));
  EXPECT_TRUE(is_const_int(div(int_imm(-7), int_imm(2)), -4));  // floor division
  EXPECT_TRUE(is_const_int(mod(int_imm(-7), int_imm(2)), 1));   // floor modulo
  EXPECT_TRUE(is_const_int(lt(int_imm(1), int_imm(2)), 1));
}

TEST(ExprTest, CastsOfIntegerConstantsWrapAsCppConverts) {
  EXPECT_TRUE(is_const_int(cast(DType::I32, int_imm(int64_t{1} << 32 | 5)), 5));
  EXPECT_TRUE(is_const_int(cast(DType::I32, int_imm(INT64_MAX)), -1));
  EXPECT_TRUE(is_const_int(cast(DType::I8, int_imm(200)), -56));
  EXPECT_TRUE(is_const_int(cast(DType::U8, int_imm(-1)), 255));
  EXPECT_TRUE(is_const_int(cast(DType::Bool, int_imm(INT64_MIN)), 1));
  Expr as_float = cast(DType::F64, int_imm(INT64_MAX));
  ASSERT_EQ(as_float->kind, ExprKind::FloatImm);
  EXPECT_EQ(as_float->as<FloatImmNode>()->value, 9223372036854775808.0);
}

TEST(ExprTest, DropsIntegerIdentitiesButNotFloatOnes) {
  Var x = make_var("x");
  EXPECT_EQ(add(x, int_imm(0)), Expr(x));
  EXPECT_EQ(mul(int_imm(1), x), Expr(x));
  EXPECT_TRUE(is_const_int(mul(x, int_imm(0)), 0));
  Var f = make_var("f", DType::F32);
  Expr sum = add(f, float_imm(0.0));
  EXPECT_EQ(sum->kind, ExprKind::Binary);  // -0.0 + 0.0 is not -0.0
}

TEST(ExprTest, PrintsWithMinimalParentheses) {
  Var x = make_var("x"), y = make_var("y");
  EXPECT_EQ(to_string(mul(add(x, y), int_imm(2))), "(x + y) * 2");
  EXPECT_EQ(to_string(add(x, int_imm(-3))), "x - 3");
  EXPECT_EQ(to_string(sub(x, sub(y, x))), "x - (y - x)");
}

TEST(ExprTest, SubstituteReplacesVariablesByIdentity) {
  Var x = make_var("x"), other_x = make_var("x");
  Expr e = add(x, other_x);
  Expr r = substitute(e, {{x.get(), int_imm(4)}});
  EXPECT_EQ(to_string(r), "x + 4");
  EXPECT_TRUE(structural_equal(substitute(r, {{other_x.get(), int_imm(1)}}), int_imm(5)));
}

}  // namespace
}  // namespace ansor
