// Scalar helpers of generated kernels, for every kernel language: Python-style integer division,
// wrapping integer arithmetic, half/bfloat16 storage conversions and activation functions. The
// C++ kernels include it through kernel_support.h, the CUDA kernels through cuda_support.h,
// where every function is also a device function; a scalar computes the same in both.
//
// Header-only and compiled inside users' builds with their warning flags: it must stay clean
// under -Wall -Wextra -Wpedantic with g++, clang++ and nvcc.
#ifndef ANSOR_SCALAR_SUPPORT_H
#define ANSOR_SCALAR_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#if defined(__CUDACC__)
#define ANSOR_HOST_DEVICE __host__ __device__
#else
#define ANSOR_HOST_DEVICE
#endif

namespace ansor_rt {

namespace detail {

// The C math functions by argument type: what both host and device code have of them.
ANSOR_HOST_DEVICE inline float floor_of(float x) { return floorf(x); }
ANSOR_HOST_DEVICE inline double floor_of(double x) { return floor(x); }
ANSOR_HOST_DEVICE inline float exp_of(float x) { return expf(x); }
ANSOR_HOST_DEVICE inline double exp_of(double x) { return exp(x); }
ANSOR_HOST_DEVICE inline float abs_of(float x) { return fabsf(x); }
ANSOR_HOST_DEVICE inline double abs_of(double x) { return fabs(x); }
ANSOR_HOST_DEVICE inline float erf_of(float x) { return erff(x); }
ANSOR_HOST_DEVICE inline double erf_of(double x) { return erf(x); }
ANSOR_HOST_DEVICE inline float sqrt_of(float x) { return sqrtf(x); }
ANSOR_HOST_DEVICE inline double sqrt_of(double x) { return sqrt(x); }

} // namespace detail

// ---- Integer division with Python semantics ---------------------------------------------------
// Tensor index arithmetic is defined with floor division (the quotient rounds toward -inf and
// the remainder takes the sign of the divisor), while C++ truncates toward zero. Overflowing
// cases (the minimum value divided by -1) are as undefined as in C++.

template <class T>
ANSOR_HOST_DEVICE constexpr T floordiv(T a, T b) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "floordiv takes integers");
  if constexpr (std::is_signed_v<T>) {
    // Truncation rounded up exactly when there is a remainder and the signs differ.
    const bool rounded_up = a % b != 0 && (a < 0) != (b < 0);
    return static_cast<T>(a / b - (rounded_up ? 1 : 0));
  } else {
    return static_cast<T>(a / b);
  }
}

template <class T>
ANSOR_HOST_DEVICE constexpr T floormod(T a, T b) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "floormod takes integers");
  if constexpr (std::is_signed_v<T>) {
    const T remainder = static_cast<T>(a % b);
    const bool wrong_sign = remainder != 0 && (remainder < 0) != (b < 0);
    return static_cast<T>(remainder + (wrong_sign ? b : T(0)));
  } else {
    return static_cast<T>(a % b);
  }
}

// a - floor(a / b) * b: the float counterpart of floormod (Python's % on floats).
ANSOR_HOST_DEVICE inline float fmod_floor(float a, float b) { return a - detail::floor_of(a / b) * b; }
ANSOR_HOST_DEVICE inline double fmod_floor(double a, double b) { return a - detail::floor_of(a / b) * b; }

// ---- Wrapping integer arithmetic ------------------------------------------------------------
// Tensor arithmetic on i32 and i64 wraps around on overflow (two's complement, as in numpy);
// in C++ signed overflow is undefined, so it is done in the unsigned type.

template <class T>
ANSOR_HOST_DEVICE constexpr T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}

template <class T>
ANSOR_HOST_DEVICE constexpr T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}

template <class T>
ANSOR_HOST_DEVICE constexpr T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// ---- Half-precision storage -------------------------------------------------------------------
// Kernels store f16 and bf16 tensors as uint16_t and compute in float. The conversions are
// plain bit manipulation so they behave the same with every compiler and target, whether or not
// it has _Float16. Widening is exact (NaN payloads included); narrowing rounds to nearest-even,
// overflows to infinity and turns NaNs into quiet NaNs of the same sign.

namespace detail {

ANSOR_HOST_DEVICE inline uint32_t bits_of(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

ANSOR_HOST_DEVICE inline float float_of(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// Rounds `kept` (the bits that remain after dropping the low bits) to nearest-even, given the
// dropped bits and the value of half a unit of `kept`.
ANSOR_HOST_DEVICE constexpr uint32_t round_nearest_even(uint32_t kept, uint32_t dropped, uint32_t half) {
  return kept + ((dropped > half || (dropped == half && (kept & 1u) != 0)) ? 1u : 0u);
}

} // namespace detail

ANSOR_HOST_DEVICE inline float f16_to_f32(uint16_t half) {
  const uint32_t sign = (half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) // Infinity or NaN.
    return detail::float_of(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  // Normal: rebias the exponent from 15 to 127.
  return detail::float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

ANSOR_HOST_DEVICE inline uint16_t f32_to_f16(float value) {
  const uint32_t bits = detail::bits_of(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep the top payload bits, set the quiet bit.
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x47800000u) // At least 2^16 (or infinity): beyond the largest half.
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {
    // Normal half, [2^-14, 2^16): subtracting 112 from the exponent and dropping 13 mantissa
    // bits gives the half's bits; a rounding carry moves into the exponent, up to infinity.
    const uint32_t kept = (magnitude - 0x38000000u) >> 13;
    return static_cast<uint16_t>(
        sign | detail::round_nearest_even(kept, magnitude & 0x1fffu, 0x1000u));
  }
  if (magnitude <= 0x33000000u) // At most 2^-25, half the smallest subnormal: rounds to zero.
    return static_cast<uint16_t>(sign);
  // Subnormal half: the value in units of 2^-24, rounded. With the implicit bit the float's
  // mantissa is value * 2^(150 - exponent), so the shift is 126 - exponent, in [14, 24].
  const uint32_t exponent = magnitude >> 23;
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;
  const uint32_t dropped = mantissa & ((1u << shift) - 1);
  return static_cast<uint16_t>(
      sign | detail::round_nearest_even(mantissa >> shift, dropped, 1u << (shift - 1)));
}

// bfloat16 is the upper half of a float.
ANSOR_HOST_DEVICE inline float bf16_to_f32(uint16_t bf16) {
  return detail::float_of(static_cast<uint32_t>(bf16) << 16);
}

ANSOR_HOST_DEVICE inline uint16_t f32_to_bf16(float value) {
  const uint32_t bits = detail::bits_of(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: set the quiet bit so it cannot become infinity.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>(detail::round_nearest_even(bits >> 16, bits & 0xffffu, 0x8000u));
}

// x rounded to TF32 (an f32 with 10 mantissa bits, the inputs of tensor cores' TF32 products):
// to nearest, ties away from zero, as cvt.rna.tf32.f32; a carry may round up to infinity.
// Infinities and NaNs stay as they are. A double is rounded to f32 first.
ANSOR_HOST_DEVICE inline float tf32(float x) {
  const uint32_t bits = detail::bits_of(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;
  return detail::float_of((bits + 0x1000u) & 0xffffe000u);
}
ANSOR_HOST_DEVICE inline double tf32(double x) { return tf32(static_cast<float>(x)); }

// ---- Activations and elementwise math ---------------------------------------------------------

// 1 / (1 + exp(-x)), evaluated through exp(-|x|) so that no intermediate overflows.
ANSOR_HOST_DEVICE inline float sigmoid(float x) {
  const float e = detail::exp_of(-detail::abs_of(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

ANSOR_HOST_DEVICE inline double sigmoid(double x) {
  const double e = detail::exp_of(-detail::abs_of(x));
  const double s = 1.0 / (1.0 + e);
  return x >= 0.0 ? s : e * s;
}

// The exact (erf) form of GELU, not the tanh approximation.
ANSOR_HOST_DEVICE inline float gelu(float x) { return x * 0.5f * (1.0f + detail::erf_of(x * 0.70710678118654752f)); }
ANSOR_HOST_DEVICE inline double gelu(double x) { return x * 0.5 * (1.0 + detail::erf_of(x * 0.70710678118654752440)); }

ANSOR_HOST_DEVICE inline float rsqrt(float x) { return 1.0f / detail::sqrt_of(x); }
ANSOR_HOST_DEVICE inline double rsqrt(double x) { return 1.0 / detail::sqrt_of(x); }

// max(x, 0); a NaN input stays NaN.
template <class T>
ANSOR_HOST_DEVICE constexpr T relu(T x) {
  return x < T(0) ? T(0) : x;
}

} // namespace ansor_rt

#endif // ANSOR_SCALAR_SUPPORT_H
