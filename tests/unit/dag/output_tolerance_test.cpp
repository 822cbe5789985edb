// The output tolerance rule: what it adds for reductions, approximate math and precision.
#include "dag/output_tolerance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace ansor {
namespace {

double tolerance_of(const std::string& body) {
  return output_tolerance(*test::dag_of(test::parse("kernel k {\n" + body + "\n}"), "k"));
}

TEST(OutputToleranceTest, GrowsWithTheLongestReduction) {
  const double short_sum = tolerance_of("X = input f32[64, 16]\nY[i:64] = sum(k:16, X[i, k])");
  const double long_sum = tolerance_of("X = input f32[4, 100000]\nY[i:4] = sum(k:100000, X[i, k])");
  EXPECT_DOUBLE_EQ(short_sum, 1e-5);  // the floor: 4e-7 * 16 is below it
  EXPECT_DOUBLE_EQ(long_sum, 4e-7 * 100000);
}

TEST(OutputToleranceTest, AddsEachApproximateCallsVectorAndScalarErrors) {
  const double plain = tolerance_of("X = input f32[4096, 1024]\nY[i:4096] = sum(k:1024, X[i, k])");
  const double with_gelu = tolerance_of("X = input f32[4096, 1024]\nY[i:4096] = sum(k:1024, gelu(X[i, k]))");
  const double with_two = tolerance_of("X = input f32[4096, 1024]\nY[i:4096] = sum(k:1024, gelu(exp(X[i, k])))");
  EXPECT_DOUBLE_EQ(with_gelu - plain, (vector_math_ulp_bound(MathFn::Gelu) + 2) * 0x1p-23);
  EXPECT_DOUBLE_EQ(with_two - with_gelu, (vector_math_ulp_bound(MathFn::Exp) + 2) * 0x1p-23);
  // Functions correctly rounded or exact in both forms add nothing.
  EXPECT_DOUBLE_EQ(tolerance_of("X = input f32[4096, 1024]\nY[i:4096] = sum(k:1024, sqrt(abs(X[i, k])))"), plain);
}

// The bounds are the ones docs/vector_math.md states and tests/runtime/vector_math_test.cpp asserts.
TEST(OutputToleranceTest, VectorMathBoundsAreTheDocumentedOnes) {
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Gelu), 7);  // the bound without FMA
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Erf), 2.5);
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Exp), 1.5);
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Sigmoid), 3);
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Sqrt), 0.5);
  EXPECT_EQ(vector_math_ulp_bound(MathFn::Floor), 0);
}

TEST(OutputToleranceTest, IntegersAreExactAndLowPrecisionIsLoose) {
  EXPECT_EQ(tolerance_of("X = input i32[64, 64]\nY[i:64] = sum(k:64, X[i, k])"), 0);
  EXPECT_GE(tolerance_of("X = input f16[64]\nY[i:64] = X[i] * 2"), 2e-2);
}

TEST(OutputToleranceTest, MatchesRelativeToTheLargestElement) {
  EXPECT_TRUE(within_output_tolerance(100.0 + 1e-4, 100.0, 1e-5, 1000.0));   // 1e-4 <= 1e-5 * 1000
  EXPECT_FALSE(within_output_tolerance(100.0 + 1e-1, 100.0, 1e-5, 1000.0));
  EXPECT_TRUE(within_output_tolerance(1e-6, 0.0, 1e-5, 0.5));                 // scale at least 1
  EXPECT_FALSE(within_output_tolerance(2e-5, 0.0, 1e-5, 0.5));
  EXPECT_TRUE(within_output_tolerance(NAN, NAN, 1e-5, 1.0));
  EXPECT_FALSE(within_output_tolerance(NAN, 0.0, 1e-5, 1.0));
  EXPECT_FALSE(within_output_tolerance(0.0, NAN, 1e-5, 1.0));
}

}  // namespace
}  // namespace ansor
