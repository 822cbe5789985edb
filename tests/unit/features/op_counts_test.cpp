// Operation counts of one store: multiply-adds absorb their multiply, each kind is counted by the
// class of its operands, indices count as integer arithmetic.
#include "features/op_counts.h"

#include <gtest/gtest.h>

namespace ansor {
namespace {

constexpr int kMad = static_cast<int>(ArithKind::Mad), kAddSub = static_cast<int>(ArithKind::AddSub), kMul = static_cast<int>(ArithKind::Mul),
              kDivMod = static_cast<int>(ArithKind::DivMod), kCmp = static_cast<int>(ArithKind::Cmp),
              kMathFunc = static_cast<int>(ArithKind::MathFunc), kOtherFunc = static_cast<int>(ArithKind::OtherFunc);

class OpCountsTest : public ::testing::Test {
 protected:
  Var i = make_var("i"), j = make_var("j");
  Expr x = load("X", DType::F32, {i}), y = load("Y", DType::F32, {j}), z = load("Z", DType::F32, {int_imm(0)});

  static OpCounts of(const Expr& value) { return count_ops(*make_store("O", {int_imm(0)}, value)->as<StoreNode>()); }
};

TEST_F(OpCountsTest, AnAddOfAMultiplyIsOneMultiplyAdd) {
  OpCounts c = of(add(mul(x, y), z));
  EXPECT_EQ(c.float_ops[kMad], 1);
  EXPECT_EQ(c.float_ops[kMul], 0);
  EXPECT_EQ(c.float_ops[kAddSub], 0);
  EXPECT_EQ(c.float_flops(), 2);
  // z - x*y and (x*y)*z + x: one multiply-add each; the inner multiply of the second stays.
  EXPECT_EQ(of(sub(z, mul(x, y))).float_ops[kMad], 1);
  OpCounts nested = of(add(mul(mul(x, y), z), x));
  EXPECT_EQ(nested.float_ops[kMad], 1);
  EXPECT_EQ(nested.float_ops[kMul], 1);
  // x*y + y*z: one multiply-add and one multiply.
  OpCounts two = of(add(mul(x, y), mul(y, z)));
  EXPECT_EQ(two.float_ops[kMad], 1);
  EXPECT_EQ(two.float_ops[kMul], 1);
  EXPECT_EQ(two.float_flops(), 3);
}

TEST_F(OpCountsTest, EachKindByTheClassOfItsOperands) {
  // X[i*j + i] / Y[j % 4]: the float division, an integer multiply-add and modulo in indices.
  OpCounts c = of(div(load("X", DType::F32, {add(mul(i, j), i)}), load("Y", DType::F32, {mod(j, int_imm(4))})));
  EXPECT_EQ(c.float_ops[kDivMod], 1);
  EXPECT_EQ(c.int_ops[kMad], 1);
  EXPECT_EQ(c.int_ops[kDivMod], 1);
  EXPECT_EQ(c.int_flops(), 3);
  // select(i < j && !(x < y), max(x, y), -z): integer and float comparisons, two bool ops, a
  // select, a float max (a comparison) and a negation (a subtraction).
  OpCounts s = of(select(logical_and(lt(i, j), unary(UnaryOp::Not, lt(x, y))), max_of(x, y), unary(UnaryOp::Neg, z)));
  EXPECT_EQ(s.int_ops[kCmp], 1);
  EXPECT_EQ(s.float_ops[kCmp], 2);
  EXPECT_EQ(s.bool_ops, 2);
  EXPECT_EQ(s.select_ops, 1);
  EXPECT_EQ(s.float_ops[kAddSub], 1);
  // exp(x) + f32(i): a float math function, a conversion to float (an "other" function), and
  // the addition; relu of an integer is an integer math function.
  OpCounts f = of(add(call(MathFn::Exp, {x}), cast(DType::F32, i)));
  EXPECT_EQ(f.float_ops[kMathFunc], 1);
  EXPECT_EQ(f.float_ops[kOtherFunc], 1);
  EXPECT_EQ(f.float_ops[kAddSub], 1);
  EXPECT_EQ(of(call(MathFn::Relu, {load("I", DType::I32, {i})})).int_ops[kMathFunc], 1);
}

TEST_F(OpCountsTest, TheStoresOwnIndicesCount) {
  Stmt s = make_store("O", {add(i, j), int_imm(0)}, x);
  OpCounts c = count_ops(*s->as<StoreNode>());
  EXPECT_EQ(c.int_ops[kAddSub], 1);
  EXPECT_EQ(c.float_flops(), 0);
}

}  // namespace
}  // namespace ansor
