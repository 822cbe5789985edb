// Tests of the f16 and bf16 storage conversions in kernel_support.h, and of the rounding to TF32,
// against references that work on values (double arithmetic and tables of every representable
// number), not bits.
#include "ansor/kernel_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using ansor_rt::bf16_to_f32;
using ansor_rt::f16_to_f32;
using ansor_rt::f32_to_bf16;
using ansor_rt::f32_to_f16;

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// ---- Binary16 ----

bool is_f16_nan(uint16_t half) { return (half & 0x7c00) == 0x7c00 && (half & 0x3ff) != 0; }

// The value of a half from the IEEE definition.
double f16_value(uint16_t half) {
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  const double sign = (half & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return mantissa == 0 ? sign * INFINITY : NAN;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Magnitudes of the halves 0x0000..0x7c00, indexed by bit pattern. The last entry stands for
// infinity at 2^16, where the exponent would continue: values from 65520 (halfway between the
// largest half and 2^16) round to it, as binary16 rounding prescribes.
const std::vector<double>& f16_magnitudes() {
  static const std::vector<double> magnitudes = [] {
    std::vector<double> values;
    for (uint32_t half = 0; half < 0x7c00; ++half)
      values.push_back(f16_value(static_cast<uint16_t>(half)));
    values.push_back(65536.0);
    return values;
  }();
  return magnitudes;
}

// Nearest half to a non-NaN float, ties to the even bit pattern.
uint16_t reference_f32_to_f16(float value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  const std::vector<double>& table = f16_magnitudes();
  if (magnitude >= table.back())
    return sign | 0x7c00;
  const size_t upper = static_cast<size_t>(
      std::lower_bound(table.begin(), table.end(), magnitude) - table.begin());
  if (table[upper] == magnitude)
    return static_cast<uint16_t>(sign | upper);
  const size_t lower = upper - 1;
  const double below = magnitude - table[lower];
  const double above = table[upper] - magnitude;
  const size_t tie_winner = lower % 2 == 0 ? lower : upper;
  const size_t nearest = below < above ? lower : above < below ? upper : tie_winner;
  return static_cast<uint16_t>(sign | nearest);
}

void expect_f32_to_f16_matches_reference(float value) {
  const uint16_t actual = f32_to_f16(value);
  if (std::isnan(value)) {
    EXPECT_TRUE(is_f16_nan(actual)) << std::hex << bits_of(value);
    EXPECT_EQ((actual & 0x8000) != 0, std::signbit(value));
    return;
  }
  ASSERT_EQ(actual, reference_f32_to_f16(value))
      << "value " << value << " bits 0x" << std::hex << bits_of(value);
}

TEST(F16, EveryHalfWidensToItsValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float widened = f16_to_f32(half);
    if (is_f16_nan(half)) {
      ASSERT_TRUE(std::isnan(widened)) << std::hex << bits;
      EXPECT_EQ(std::signbit(widened), (bits & 0x8000) != 0);
    } else {
      ASSERT_EQ(static_cast<double>(widened), f16_value(half)) << std::hex << bits;
      EXPECT_EQ(std::signbit(widened), (bits & 0x8000) != 0) << std::hex << bits;
    }
  }
}

TEST(F16, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const uint16_t back = f32_to_f16(f16_to_f32(half));
    if (is_f16_nan(half)) {
      ASSERT_TRUE(is_f16_nan(back)) << std::hex << bits;
      EXPECT_NE(back & 0x0200, 0) << "NaNs come back quiet";
      EXPECT_EQ(back & 0x8000, half & 0x8000);
    } else {
      ASSERT_EQ(back, half) << std::hex << bits;
    }
  }
}

// Exact ties, and the floats just beside them, between every pair of adjacent halves, including
// the subnormal range and the tie between the largest half and infinity.
TEST(F16, RoundingAtEveryMidpointMatchesReference) {
  const std::vector<double>& table = f16_magnitudes();
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const float midpoint = static_cast<float>((table[i] + table[i + 1]) / 2);
    ASSERT_EQ(static_cast<double>(midpoint), (table[i] + table[i + 1]) / 2) << "exact in float";
    for (float value : {midpoint, std::nextafter(midpoint, 0.0f),
                        std::nextafter(midpoint, INFINITY), static_cast<float>(table[i])}) {
      expect_f32_to_f16_matches_reference(value);
      expect_f32_to_f16_matches_reference(-value);
    }
  }
}

TEST(F16, RoundingAtRangeBoundaries) {
  const float cases[] = {0.0f,
                         std::ldexp(1.0f, -25),           // Half the smallest subnormal: to zero.
                         std::nextafter(std::ldexp(1.0f, -25), 1.0f),
                         std::nextafter(std::ldexp(1.0f, -25), 0.0f),
                         std::ldexp(1.0f, -24),           // Smallest subnormal.
                         std::ldexp(1.5f, -24),           // Tie between 1 and 2 subnormal units.
                         std::ldexp(1.0f, -14),           // Smallest normal.
                         std::nextafter(std::ldexp(1.0f, -14), 0.0f),
                         std::ldexp(1023.5f, -24),        // Tie that rounds up into the normals.
                         65504.0f,                        // Largest half.
                         65519.99609375f,                 // Just below the tie: stays finite.
                         65520.0f,                        // Tie: rounds to infinity.
                         65536.0f,
                         1e10f,
                         3.4028235e38f,
                         INFINITY,
                         std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::min(),
                         NAN,
                         float_of(0x7f800001u), // Signalling NaN whose payload sits below bit 13.
                         float_of(0x7fc00000u)};
  for (float value : cases) {
    expect_f32_to_f16_matches_reference(value);
    expect_f32_to_f16_matches_reference(-value);
  }
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-65520.0f), 0xfc00);
  EXPECT_EQ(f32_to_f16(65519.99609375f), 0x7bff);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

TEST(F16, RandomFloatsMatchReference) {
  std::mt19937 random(12345);
  for (int i = 0; i < 1000000; ++i)
    expect_f32_to_f16_matches_reference(float_of(static_cast<uint32_t>(random())));
  // Concentrated on the half range, where the uniform bit patterns above are sparse.
  std::uniform_real_distribution<float> exponent(-27.0f, 17.0f);
  std::uniform_real_distribution<float> fraction(1.0f, 2.0f);
  for (int i = 0; i < 1000000; ++i) {
    const int scale = static_cast<int>(std::floor(exponent(random)));
    const float value = std::ldexp(fraction(random), scale);
    expect_f32_to_f16_matches_reference(i % 2 == 0 ? value : -value);
  }
}

// ---- bfloat16 ----

bool is_bf16_nan(uint16_t bf16) { return (bf16 & 0x7f80) == 0x7f80 && (bf16 & 0x7f) != 0; }

double bf16_value(uint16_t bf16) {
  const int exponent = (bf16 >> 7) & 0xff;
  const int mantissa = bf16 & 0x7f;
  const double sign = (bf16 & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0xff)
    return mantissa == 0 ? sign * INFINITY : NAN;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -133);
  return sign * std::ldexp(128 + mantissa, exponent - 134);
}

// Nearest bfloat16 to a non-NaN float, ties to even; past the largest finite value the next
// step, 2^128, is infinity.
uint16_t reference_f32_to_bf16(float value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (std::isinf(magnitude))
    return sign | 0x7f80;
  // The candidates are the bf16 at or below the magnitude and the next one up.
  uint16_t lower = 0;
  for (int step = 0x4000; step > 0; step >>= 1) {
    const int candidate = lower + step;
    if (candidate <= 0x7f80 && bf16_value(static_cast<uint16_t>(candidate)) <= magnitude)
      lower = static_cast<uint16_t>(candidate);
  }
  if (bf16_value(lower) == magnitude)
    return sign | lower;
  const uint16_t upper = static_cast<uint16_t>(lower + 1);
  const double upper_value = upper == 0x7f80 ? std::ldexp(1.0, 128) : bf16_value(upper);
  const double below = magnitude - bf16_value(lower);
  const double above = upper_value - magnitude;
  const uint16_t tie_winner = lower % 2 == 0 ? lower : upper;
  const uint16_t nearest = below < above ? lower : above < below ? upper : tie_winner;
  return sign | nearest;
}

void expect_f32_to_bf16_matches_reference(float value) {
  const uint16_t actual = f32_to_bf16(value);
  if (std::isnan(value)) {
    EXPECT_TRUE(is_bf16_nan(actual)) << std::hex << bits_of(value);
    EXPECT_EQ((actual & 0x8000) != 0, std::signbit(value));
    return;
  }
  ASSERT_EQ(actual, reference_f32_to_bf16(value))
      << "value " << value << " bits 0x" << std::hex << bits_of(value);
}

TEST(BF16, EveryValueWidensExactlyAndRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t bf16 = static_cast<uint16_t>(bits);
    const float widened = bf16_to_f32(bf16);
    const uint16_t back = f32_to_bf16(widened);
    if (is_bf16_nan(bf16)) {
      ASSERT_TRUE(std::isnan(widened)) << std::hex << bits;
      ASSERT_TRUE(is_bf16_nan(back)) << std::hex << bits;
      EXPECT_EQ(back & 0x8000, bf16 & 0x8000);
    } else {
      ASSERT_EQ(static_cast<double>(widened), bf16_value(bf16)) << std::hex << bits;
      ASSERT_EQ(back, bf16) << std::hex << bits;
    }
  }
}

TEST(BF16, RoundingAtBoundariesMatchesReference) {
  const float cases[] = {0.0f,
                         1.0f,
                         float_of(0x3f808000u), // Tie, even below: rounds down.
                         float_of(0x3f818000u), // Tie, odd below: rounds up.
                         float_of(0x3f808001u),
                         float_of(0x3f807fffu),
                         float_of(0x7f7f8000u), // Tie between the largest bf16 and infinity.
                         float_of(0x7f7f7fffu),
                         std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::denorm_min(),
                         float_of(0x00008000u), // Subnormal tie.
                         float_of(0x00018000u),
                         INFINITY,
                         NAN,
                         float_of(0x7f800001u)}; // NaN that truncation would turn into infinity.
  for (float value : cases) {
    expect_f32_to_bf16_matches_reference(value);
    expect_f32_to_bf16_matches_reference(-value);
  }
  EXPECT_EQ(f32_to_bf16(float_of(0x7f7f8000u)), 0x7f80);
}

// tf32(x) by value: the nearest multiple of 2^(e - 10) for x in [2^e, 2^(e+1)), ties away from
// zero; subnormals keep 10 bits below 2^-126 the same way; infinities and NaNs stay.
double tf32_reference(float value) {
  if (!std::isfinite(value) || value == 0) return value;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m 2^exponent, 0.5 <= |m| < 1
  const double unit = std::ldexp(1.0, std::max(exponent - 1, -126) - 10);
  const double units = std::fabs(static_cast<double>(value)) / unit;
  return std::copysign(std::floor(units + 0.5) * unit, value);
}

TEST(TF32, RoundsToNearestTiesAwayFromZero) {
  const float cases[] = {1.0f,
                         float_of(0x3f801000u),  // 1 + 2^-11: a tie, away from zero to 1 + 2^-10.
                         float_of(0x3f800fffu),  // Just below: down to 1.
                         float_of(0x3f803000u),  // 1 + 3 2^-11: a tie above an odd unit, still away.
                         std::numeric_limits<float>::max(),  // Rounds past the largest TF32: infinity.
                         std::numeric_limits<float>::denorm_min(),
                         float_of(0x00001000u),  // A subnormal tie.
                         float_of(0x00400fffu)};
  for (float value : cases)
    for (float x : {value, -value}) {
      const double expected = std::fabs(tf32_reference(x)) > std::numeric_limits<float>::max() ? std::copysign(INFINITY, x) : tf32_reference(x);
      EXPECT_EQ(static_cast<double>(ansor_rt::tf32(x)), expected) << x;
    }
  EXPECT_EQ(bits_of(ansor_rt::tf32(float_of(0x3f801000u))), 0x3f802000u);
  EXPECT_TRUE(std::isinf(ansor_rt::tf32(INFINITY)));
  EXPECT_TRUE(std::isnan(ansor_rt::tf32(NAN)));
  EXPECT_EQ(bits_of(ansor_rt::tf32(float_of(0x7f800001u))), 0x7f800001u) << "a NaN stays the NaN it is";
}

TEST(TF32, RandomFloatsMatchReference) {
  std::mt19937 random(2468);
  for (int i = 0; i < 300000; ++i) {
    const float x = float_of(static_cast<uint32_t>(random()));
    if (!std::isfinite(x)) continue;
    const double expected = tf32_reference(x);
    if (std::fabs(expected) > std::numeric_limits<float>::max()) continue;  // the overflow case above
    ASSERT_EQ(static_cast<double>(ansor_rt::tf32(x)), expected) << x;
  }
}

TEST(BF16, RandomFloatsMatchReference) {
  std::mt19937 random(6789);
  for (int i = 0; i < 300000; ++i)
    expect_f32_to_bf16_matches_reference(float_of(static_cast<uint32_t>(random())));
}

} // namespace
