// The tensor intrinsics that generated CPU kernels call (the rows of the generator's table,
// generator/lower/tensor_intrinsics.cpp): one call computes, for each of the 16 lanes of a zmm
// vector (8 of a ymm one for AVX-VNNI), a dot product of a pair of bf16 or a quad of 8-bit
// values with the lane's pair or quad, and adds it to the lane's accumulator. The broadcast
// operand (`lhs`) is 2 or 4 consecutive elements; the other (`rhs`) is the lanes' pairs or quads
// one after the other (the layout const weights are packed into); the accumulators are
// consecutive elements.
//
// Each exists only where the compiler targets the instruction (-march=native on a CPU that
// has it): the generator calls one only for a target that has its feature.
#ifndef ANSOR_TENSOR_INTRINSICS_H
#define ANSOR_TENSOR_INTRINSICS_H

#include <cstdint>
#include <cstring>

#if (defined(__AVX512F__) && (defined(__AVX512BF16__) || defined(__AVX512VNNI__))) || defined(__AVXVNNI__)
#include <immintrin.h>
#endif

namespace ansor_rt {

#if (defined(__AVX512F__) && (defined(__AVX512BF16__) || defined(__AVX512VNNI__))) || defined(__AVXVNNI__)
namespace detail {
// Two or four 1- or 2-byte elements as one 32-bit lane, without reading them through a wider type.
inline int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace detail
#endif

#if defined(__AVX512F__) && defined(__AVX512BF16__)
// VDPBF16PS: out[n] += lhs[0] * rhs[2n] + lhs[1] * rhs[2n + 1], n < 16, in f32.
inline void dot_bf16x2_f32x16(const uint16_t* lhs, const uint16_t* rhs, float* out) {
  const __m512i pair = _mm512_set1_epi32(detail::load_i32(lhs));
  const __m512i pairs = _mm512_loadu_si512(rhs);
  _mm512_storeu_ps(out, _mm512_dpbf16_ps(_mm512_loadu_ps(out), (__m512bh)pair, (__m512bh)pairs));
}
#endif

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
// VPDPBUSD: out[n] += sum over q < 4 of lhs[q] * rhs[4n + q], n < 16, in i32; lhs u8, rhs s8.
inline void dot_u8s8x4_i32x16(const uint8_t* lhs, const int8_t* rhs, int32_t* out) {
  const __m512i quad = _mm512_set1_epi32(detail::load_i32(lhs));
  _mm512_storeu_si512(out, _mm512_dpbusd_epi32(_mm512_loadu_si512(out), quad, _mm512_loadu_si512(rhs)));
}
// The same instruction with the signed operand broadcast: lhs s8, rhs u8.
inline void dot_s8u8x4_i32x16(const int8_t* lhs, const uint8_t* rhs, int32_t* out) {
  const __m512i quad = _mm512_set1_epi32(detail::load_i32(lhs));
  _mm512_storeu_si512(out, _mm512_dpbusd_epi32(_mm512_loadu_si512(out), _mm512_loadu_si512(rhs), quad));
}
#endif

#if defined(__AVXVNNI__)
// VPDPBUSD on ymm (AVX-VNNI): out[n] += sum over q < 4 of lhs[q] * rhs[4n + q], n < 8, in i32.
inline void dot_u8s8x4_i32x8(const uint8_t* lhs, const int8_t* rhs, int32_t* out) {
  const __m256i quad = _mm256_set1_epi32(detail::load_i32(lhs));
  const __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_dpbusd_avx_epi32(acc, quad, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rhs))));
}
// The same instruction with the signed operand broadcast: lhs s8, rhs u8.
inline void dot_s8u8x4_i32x8(const int8_t* lhs, const uint8_t* rhs, int32_t* out) {
  const __m256i quad = _mm256_set1_epi32(detail::load_i32(lhs));
  const __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_dpbusd_avx_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rhs)), quad));
}
#endif

}  // namespace ansor_rt

#endif
