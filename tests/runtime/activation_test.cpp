// Tests of sigmoid, gelu, rsqrt and relu against the textbook formulas evaluated in double.
#include "ansor/kernel_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

double reference_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double reference_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

TEST(Sigmoid, MatchesFormula) {
  for (double x = -30.0; x <= 30.0; x += 0.0625) {
    EXPECT_NEAR(ansor_rt::sigmoid(x), reference_sigmoid(x), 1e-15) << x;
    EXPECT_NEAR(ansor_rt::sigmoid(static_cast<float>(x)), reference_sigmoid(x), 1e-7) << x;
    // Relative accuracy too where the result is tiny.
    EXPECT_NEAR(ansor_rt::sigmoid(x) / reference_sigmoid(x), 1.0, 1e-13) << x;
  }
}

TEST(Sigmoid, SaturatesWithoutOverflow) {
  for (double x : {1000.0, 1e30, 1e300, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(ansor_rt::sigmoid(x), 1.0);
    EXPECT_EQ(ansor_rt::sigmoid(-x), 0.0);
    EXPECT_EQ(ansor_rt::sigmoid(static_cast<float>(x)), 1.0f);
    EXPECT_EQ(ansor_rt::sigmoid(static_cast<float>(-x)), 0.0f);
  }
  // Far from saturation in the negative direction, small results stay accurate.
  EXPECT_NEAR(ansor_rt::sigmoid(-100.0), 3.7200759760208356e-44, 1e-57);
  EXPECT_NEAR(ansor_rt::sigmoid(-100.0f), 3.720076e-44f, 3e-45f);
  EXPECT_EQ(ansor_rt::sigmoid(100.0f), 1.0f);
  EXPECT_TRUE(std::isnan(ansor_rt::sigmoid(std::nan(""))));
  EXPECT_TRUE(std::isnan(ansor_rt::sigmoid(std::nanf(""))));
}

TEST(Gelu, MatchesExactErfForm) {
  for (double x = -10.0; x <= 10.0; x += 0.03125) {
    EXPECT_NEAR(ansor_rt::gelu(x), reference_gelu(x), 1e-14 * std::max(1.0, std::fabs(x))) << x;
    EXPECT_NEAR(ansor_rt::gelu(static_cast<float>(x)), reference_gelu(x),
                2e-6 * std::max(1.0, std::fabs(x)))
        << x;
  }
  EXPECT_EQ(ansor_rt::gelu(0.0), 0.0);
  EXPECT_EQ(ansor_rt::gelu(-50.0f), -0.0f);
  EXPECT_EQ(ansor_rt::gelu(50.0f), 50.0f);
  // The erf form, not the tanh approximation (1.3995716 at x = 1.5).
  EXPECT_NEAR(ansor_rt::gelu(1.5), 1.3997892, 1e-7);
}

TEST(Rsqrt, MatchesFormula) {
  for (double x : {1e-30, 0.01, 0.25, 1.0, 2.0, 3.0, 1e6, 1e30}) {
    EXPECT_DOUBLE_EQ(ansor_rt::rsqrt(x), 1.0 / std::sqrt(x)) << x;
    EXPECT_FLOAT_EQ(ansor_rt::rsqrt(static_cast<float>(x)), static_cast<float>(1.0 / std::sqrt(x)))
        << x;
  }
  EXPECT_EQ(ansor_rt::rsqrt(0.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ansor_rt::rsqrt(-1.0)));
}

TEST(Relu, ClampsNegativesForEveryType) {
  EXPECT_EQ(ansor_rt::relu(-2.5f), 0.0f);
  EXPECT_EQ(ansor_rt::relu(2.5f), 2.5f);
  EXPECT_EQ(ansor_rt::relu(-1e300), 0.0);
  EXPECT_EQ(ansor_rt::relu(3.0), 3.0);
  EXPECT_EQ(ansor_rt::relu(-7), 0);
  EXPECT_EQ(ansor_rt::relu(7), 7);
  EXPECT_EQ(ansor_rt::relu<int8_t>(-128), 0);
  EXPECT_EQ(ansor_rt::relu<int64_t>(INT64_MAX), INT64_MAX);
  EXPECT_TRUE(std::isnan(ansor_rt::relu(std::nanf(""))));
  static_assert(ansor_rt::relu(-3) == 0 && ansor_rt::relu(4) == 4, "");
}

} // namespace
