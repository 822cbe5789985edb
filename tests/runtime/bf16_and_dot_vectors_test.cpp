// The bf16 vector conversions of kernel_support.h against the scalar ones, bit for bit, and the
// dot-product wrappers of tensor_intrinsics.h against plain sums, compiled as kernels are (the
// host's -march=native): on a CPU without AVX512-BF16 or VNNI those wrappers do not exist and
// their tests are skipped.
#include "ansor/kernel_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Every class of float: random bit patterns, exact halfway cases both ways, the largest finite
// values (which round to infinity), infinities, signalling and quiet NaNs, zeros, subnormals.
std::vector<float> interesting_floats() {
  std::vector<float> xs;
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 16; ++i) xs.push_back(float_of(static_cast<uint32_t>(rng())));
  for (uint32_t upper : {0x3f80u, 0x3f81u, 0x4049u, 0x7f7fu, 0x0001u, 0x8000u})
    for (uint32_t lower : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) xs.push_back(float_of(upper << 16 | lower));
  for (uint32_t bits : {0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffbfffffu, 0x00000000u, 0x80000000u, 0x00000001u})
    xs.push_back(float_of(bits));
  while (xs.size() % 16 != 0) xs.push_back(1.0f);
  return xs;
}

TEST(Bf16Vectors, ConversionsMatchTheScalarOnesBitForBit) {
  const std::vector<float> xs = interesting_floats();
  for (size_t i = 0; i < xs.size(); i += 16) {
    const ansor_rt::vec<float, 16> v = ansor_rt::vload<float, 16>(&xs[i]);
    uint16_t stored[16];
    ansor_rt::vstore_bf16<16>(stored, v);
    const ansor_rt::vec<float, 16> loaded = ansor_rt::vload_bf16<16>(stored), rounded = ansor_rt::vround_bf16<16>(v);
    for (int l = 0; l < 16; ++l) {
      const uint16_t expected = ansor_rt::f32_to_bf16(xs[i + l]);
      ASSERT_EQ(stored[l], expected) << "lane " << l << " of " << xs[i + l];
      const float back = ansor_rt::bf16_to_f32(expected);
      const float loaded_lane = loaded[l], rounded_lane = rounded[l];
      ASSERT_TRUE(std::memcmp(&loaded_lane, &back, sizeof back) == 0) << xs[i + l];
      ASSERT_TRUE(std::memcmp(&rounded_lane, &back, sizeof back) == 0) << xs[i + l];
    }
  }
}

TEST(Bf16Vectors, MaskedStoresAndLoadsTouchTheActiveLanesOnly) {
  float xs[8] = {1.5f, -2.25f, 3.0f, 1e-3f, 7.0f, 8.0f, 9.0f, 10.0f};
  uint16_t out[8];
  for (uint16_t& o : out) o = 0xabcd;
  ansor_rt::vstore_bf16_masked<8>(out, ansor_rt::vload<float, 8>(xs), 3);
  for (int l = 0; l < 8; ++l) EXPECT_EQ(out[l], l < 3 ? ansor_rt::f32_to_bf16(xs[l]) : 0xabcd) << l;
  const ansor_rt::vec<float, 8> loaded = ansor_rt::vload_bf16_masked<8>(out, 2);
  for (int l = 0; l < 8; ++l) EXPECT_EQ(loaded[l], l < 2 ? ansor_rt::bf16_to_f32(out[l]) : 0.0f) << l;
}

TEST(DotProductWrappers, Bf16PairsAreSummedIntoEachLane) {
#if defined(__AVX512F__) && defined(__AVX512BF16__)
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-64, 64);
  uint16_t lhs[2], rhs[32];
  float out[16], expected[16];
  for (uint16_t& x : lhs) x = ansor_rt::f32_to_bf16(small(rng) / 8.0f);
  for (uint16_t& x : rhs) x = ansor_rt::f32_to_bf16(small(rng) / 8.0f);
  for (int n = 0; n < 16; ++n) {
    out[n] = static_cast<float>(n) - 5;
    // Products of these values and their sums are exact in f32: any order gives the same.
    expected[n] = out[n] + ansor_rt::bf16_to_f32(lhs[0]) * ansor_rt::bf16_to_f32(rhs[2 * n]) +
                  ansor_rt::bf16_to_f32(lhs[1]) * ansor_rt::bf16_to_f32(rhs[2 * n + 1]);
  }
  ansor_rt::dot_bf16x2_f32x16(lhs, rhs, out);
  for (int n = 0; n < 16; ++n) EXPECT_EQ(out[n], expected[n]) << n;
#else
  GTEST_SKIP() << "compiled without AVX512-BF16";
#endif
}

// The u8 × s8 wrapper and the s8 × u8 one of `Lanes` lanes against plain i32 sums, starting
// from accumulators near the limits: the sums wrap as i32 sums do.
template <int Lanes>
void expect_byte_quads_summed_exactly(void (*u8s8)(const uint8_t*, const int8_t*, int32_t*),
                                      void (*s8u8)(const int8_t*, const uint8_t*, int32_t*), unsigned seed) {
  std::mt19937 rng(seed);
  uint8_t u[4 * Lanes];
  int8_t s[4 * Lanes];
  for (uint8_t& x : u) x = static_cast<uint8_t>(rng());
  for (int8_t& x : s) x = static_cast<int8_t>(rng());
  u[0] = 255;
  s[0] = -128;
  int32_t out[Lanes], expected[Lanes];
  for (int n = 0; n < Lanes; ++n) {
    out[n] = expected[n] = (n % 2 ? 1 : -1) * (1 << 30);
    for (int q = 0; q < 4; ++q) expected[n] = static_cast<int32_t>(static_cast<uint32_t>(expected[n]) + static_cast<uint32_t>(u[q] * s[4 * n + q]));
  }
  u8s8(u, s, out);
  for (int n = 0; n < Lanes; ++n) EXPECT_EQ(out[n], expected[n]) << n;
  for (int n = 0; n < Lanes; ++n) {
    out[n] = expected[n] = n;
    for (int q = 0; q < 4; ++q) expected[n] += s[q] * u[4 * n + q];
  }
  s8u8(s, u, out);
  for (int n = 0; n < Lanes; ++n) EXPECT_EQ(out[n], expected[n]) << n;
}

TEST(DotProductWrappers, ByteQuadsAreSummedExactlyIntoEachLane) {
#if defined(__AVX512F__) && defined(__AVX512VNNI__)
  expect_byte_quads_summed_exactly<16>(ansor_rt::dot_u8s8x4_i32x16, ansor_rt::dot_s8u8x4_i32x16, 4);
#else
  GTEST_SKIP() << "compiled without AVX512-VNNI";
#endif
}

TEST(DotProductWrappers, ByteQuadsAreSummedExactlyIntoEachOfEightLanes) {
#if defined(__AVXVNNI__)
  expect_byte_quads_summed_exactly<8>(ansor_rt::dot_u8s8x4_i32x8, ansor_rt::dot_s8u8x4_i32x8, 5);
#else
  GTEST_SKIP() << "compiled without AVX-VNNI";
#endif
}

}  // namespace
