// Integer analysis: interval bounds, linear forms and the index simplifier that lowering and
// the bounds checks of kernels.def rely on.
#include "ir/arith.h"

#include <gtest/gtest.h>

#include "ir/printer.h"

namespace ansor {
namespace {

class ArithTest : public ::testing::Test {
 protected:
  Var i = make_var("i"), j = make_var("j"), k = make_var("k");
  RangeMap ranges{{i.get(), Interval::range(8)}, {j.get(), Interval::range(4)}, {k.get(), Interval::range(16)}};
};

TEST_F(ArithTest, BoundsOfAffineExpressions) {
  Interval b = bound_of(add(mul(i, int_imm(4)), j), ranges);
  EXPECT_EQ(b.min, 0);
  EXPECT_EQ(b.max, 31);
  b = bound_of(sub(j, i), ranges);
  EXPECT_EQ(b.min, -7);
  EXPECT_EQ(b.max, 3);
}

TEST_F(ArithTest, BoundsOfFloorDivisionAndModulo) {
  Interval d = bound_of(div(sub(i, int_imm(3)), int_imm(2)), ranges);  // (i - 3) in [-3, 4]
  EXPECT_EQ(d.min, -2);
  EXPECT_EQ(d.max, 2);
  Interval m = bound_of(mod(k, int_imm(5)), ranges);
  EXPECT_EQ(m.min, 0);
  EXPECT_EQ(m.max, 4);
  Interval shifted = bound_of(mod(add(j, int_imm(8)), int_imm(16)), ranges);  // one period: exact
  EXPECT_EQ(shifted.min, 8);
  EXPECT_EQ(shifted.max, 11);
}

TEST_F(ArithTest, UnknownVariablesAreUnbounded) {
  Var free = make_var("free");
  EXPECT_FALSE(bound_of(add(free, i), ranges).bounded());
  EXPECT_TRUE(bound_of(mul(free, int_imm(0)), ranges).is_point());
}

TEST_F(ArithTest, LinearizeCollectsTermsAndKeepsNonLinearAtoms) {
  LinearForm f = linearize(sub(add(mul(i, int_imm(3)), add(j, i)), int_imm(5)));
  EXPECT_EQ(f.coef_of(i.get()), 4);
  EXPECT_EQ(f.coef_of(j.get()), 1);
  EXPECT_EQ(f.constant, -5);
  LinearForm g = linearize(add(div(i, int_imm(2)), div(i, int_imm(2))));
  ASSERT_EQ(g.terms.size(), 1u);
  EXPECT_EQ(g.terms[0].coef, 2);
}

TEST_F(ArithTest, SimplifyResolvesSplitAndFuseArithmetic) {
  // (i*4 + j) / 4 = i and (i*4 + j) % 4 = j when j is in [0, 4).
  Expr fused = add(mul(i, int_imm(4)), j);
  EXPECT_TRUE(structural_equal(simplify(div(fused, int_imm(4)), ranges), i));
  EXPECT_TRUE(structural_equal(simplify(mod(fused, int_imm(4)), ranges), j));
  // Without the range of j the quotient keeps a division of the remainder.
  EXPECT_EQ(to_string(simplify(div(fused, int_imm(4)))), "i + j / 4");
  EXPECT_TRUE(structural_equal(simplify(div(div(k, int_imm(2)), int_imm(4)), ranges), simplify(div(k, int_imm(8)), ranges)));
}

TEST_F(ArithTest, SimplifySplitsADivisorThatTheIndexsMultiplesShare) {
  // A fused index k*4 + j (j in [0, 4)) by 8: 4 divides 8, so (k*4 + j) / 8 = k / 2 and
  // (k*4 + j) % 8 = (k % 2)*4 + j, which is linear in the vector lane j.
  Expr fused = add(mul(k, int_imm(4)), j);
  EXPECT_EQ(to_string(simplify(div(fused, int_imm(8)), ranges)), "k / 2");
  EXPECT_EQ(to_string(simplify(mod(fused, int_imm(8)), ranges)), "k % 2 * 4 + j");
  EXPECT_EQ(linear_coefficient(simplify(mod(fused, int_imm(8)), ranges), j.get()), std::optional<int64_t>(1));
  // With a coefficient beyond the divisor: (i*32 + k*4 + j) / 8 = i*4 + k / 2.
  EXPECT_EQ(to_string(simplify(div(add(mul(i, int_imm(32)), fused), int_imm(8)), ranges)), "i * 4 + k / 2");
  // j + 1 may reach 4: no split by 4, and the remainder stays a modulo of the whole.
  EXPECT_EQ(to_string(simplify(mod(add(fused, int_imm(1)), int_imm(8)), ranges)), "(k * 4 + j + 1) % 8");
  // The canonical rules of kernel bodies leave the division whole.
  EXPECT_EQ(to_string(simplify(div(fused, int_imm(8)), ranges, SimplifyRules::Canonical)), "(k * 4 + j) / 8");
}

TEST_F(ArithTest, SimplifyDecidesComparisonsAndMinMax) {
  EXPECT_TRUE(is_const_int(simplify(lt(add(mul(i, int_imm(4)), j), int_imm(32)), ranges), 1));
  EXPECT_TRUE(is_const_int(simplify(ge(i, int_imm(8)), ranges), 0));
  EXPECT_FALSE(as_const_int(simplify(lt(i, int_imm(5)), ranges)));
  EXPECT_TRUE(structural_equal(simplify(min_of(j, add(i, int_imm(10))), ranges), j));
  EXPECT_TRUE(can_prove(le(j, add(i, int_imm(3))), ranges));
}

TEST_F(ArithTest, SimplifyLeavesFloatArithmeticAlone) {
  Var x = make_var("x", DType::F32);
  Expr e = add(x, float_imm(0.0));
  EXPECT_EQ(simplify(e, ranges), e);
}

}  // namespace
}  // namespace ansor
