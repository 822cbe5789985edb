// Tests of floordiv, floormod and fmod_floor against their mathematical definitions.
#include "ansor/kernel_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using ansor_rt::floordiv;
using ansor_rt::floormod;

// Usable in constant expressions, as index arithmetic in generated code may need.
static_assert(floordiv(-7, 2) == -4 && floormod(-7, 2) == 1, "");
static_assert(floordiv(7, -2) == -4 && floormod(7, -2) == -1, "");
static_assert(floordiv(7u, 2u) == 3u && floormod(7u, 2u) == 1u, "");

// The floor quotient by search: the q with q*b <= a < (q+1)*b for b > 0, mirrored for b < 0.
int brute_floordiv(int a, int b) {
  for (int q = -64; q <= 64; ++q) {
    const bool fits = b > 0 ? q * b <= a && a < (q + 1) * b : q * b >= a && a > (q + 1) * b;
    if (fits)
      return q;
  }
  ADD_FAILURE() << "no quotient for " << a << " / " << b;
  return 0;
}

template <class T>
void check_small_range() {
  const int lowest = std::is_signed_v<T> ? -20 : 0;
  for (int a = lowest; a <= 20; ++a) {
    for (int b = lowest; b <= 20; ++b) {
      if (b == 0)
        continue;
      const int q = brute_floordiv(a, b);
      ASSERT_EQ(floordiv(static_cast<T>(a), static_cast<T>(b)), static_cast<T>(q))
          << a << " / " << b;
      ASSERT_EQ(floormod(static_cast<T>(a), static_cast<T>(b)), static_cast<T>(a - q * b))
          << a << " % " << b;
    }
  }
}

TEST(FloorDivMod, MatchesDefinitionForSmallOperands) {
  check_small_range<int8_t>();
  check_small_range<int16_t>();
  check_small_range<int32_t>();
  check_small_range<int64_t>();
  check_small_range<uint8_t>();
  check_small_range<uint32_t>();
  check_small_range<uint64_t>();
}

__extension__ typedef __int128 Int128;

// Checks the defining properties exactly in 128-bit arithmetic: q*b + r == a, and r lies in
// [0, b) for b > 0 or (b, 0] for b < 0.
template <class T>
void expect_floor_properties(T a, T b) {
  const Int128 q = floordiv(a, b);
  const Int128 r = floormod(a, b);
  EXPECT_EQ(q * b + r, Int128{a}) << +a << " / " << +b;
  if (b > 0)
    EXPECT_TRUE(r >= 0 && r < b) << +a << " % " << +b;
  else
    EXPECT_TRUE(r <= 0 && r > b) << +a << " % " << +b;
}

template <class T>
void check_extremes() {
  constexpr T lowest = std::numeric_limits<T>::lowest();
  constexpr T highest = std::numeric_limits<T>::max();
  const T values[] = {lowest, static_cast<T>(lowest + 1), static_cast<T>(-3), static_cast<T>(-1),
                      static_cast<T>(0), static_cast<T>(1), static_cast<T>(3),
                      static_cast<T>(highest - 1), highest};
  for (T a : values) {
    for (T b : values) {
      if (b == 0 || (a == lowest && b == -1)) // Division by zero; overflow.
        continue;
      expect_floor_properties(a, b);
    }
  }
}

TEST(FloorDivMod, ExtremesOfEachType) {
  check_extremes<int8_t>();
  check_extremes<int16_t>();
  check_extremes<int32_t>();
  check_extremes<int64_t>();
  EXPECT_EQ(floordiv<int8_t>(-128, 3), -43);
  EXPECT_EQ(floormod<int8_t>(-128, 3), 1);
  EXPECT_EQ(floordiv<int8_t>(-128, 127), -2);
  EXPECT_EQ(floormod<int8_t>(-128, 127), 126);
  EXPECT_EQ(floordiv<int64_t>(INT64_MIN, 2), INT64_MIN / 2);
  EXPECT_EQ(floordiv<int64_t>(INT64_MAX, -2), -(INT64_MAX / 2) - 1);
  EXPECT_EQ(floormod<int64_t>(INT64_MAX, INT64_MIN), -1);
  EXPECT_EQ(floordiv<uint64_t>(UINT64_MAX, 2), UINT64_MAX / 2);
}

TEST(FmodFloor, HasTheSignOfTheDivisor) {
  EXPECT_DOUBLE_EQ(ansor_rt::fmod_floor(7.5, 2.0), 1.5);
  EXPECT_DOUBLE_EQ(ansor_rt::fmod_floor(-7.5, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(ansor_rt::fmod_floor(7.5, -2.0), -0.5);
  EXPECT_DOUBLE_EQ(ansor_rt::fmod_floor(-7.5, -2.0), -1.5);
  EXPECT_FLOAT_EQ(ansor_rt::fmod_floor(-1.25f, 1.0f), 0.75f);
  EXPECT_FLOAT_EQ(ansor_rt::fmod_floor(5.0f, 2.5f), 0.0f);
}

TEST(FmodFloor, MatchesFormulaOnAGrid) {
  for (int i = -40; i <= 40; ++i) {
    for (int j = -9; j <= 9; ++j) {
      if (j == 0)
        continue;
      const double a = i * 0.375;
      const double b = j * 0.5;
      const double expected = a - std::floor(a / b) * b;
      EXPECT_DOUBLE_EQ(ansor_rt::fmod_floor(a, b), expected) << a << " mod " << b;
      EXPECT_FLOAT_EQ(ansor_rt::fmod_floor(static_cast<float>(a), static_cast<float>(b)),
                      static_cast<float>(expected))
          << a << " mod " << b;
      const double result = ansor_rt::fmod_floor(a, b);
      EXPECT_TRUE(result == 0 || (result > 0) == (b > 0)) << a << " mod " << b;
    }
  }
}

} // namespace
