// Math functions on float vectors (vec<float, N>, any power-of-two N) for vectorised kernel
// loops: branch-free range reductions and polynomials on GCC/Clang vector types, so that the
// compiler emits packed instructions for the target (AVX-512, AVX2, NEON, ...) instead of one
// libm call per lane. Header-only, so that a kernel library needs no libmvec or SLEEF.
//
// Accuracy (maximum error against double-precision references, measured over millions of
// inputs by tests/runtime/vector_math_test.cpp) and special values are in docs/vector_math.md.
// Lanes never interact: a lane's result does not depend on N.
//
// Included by kernel_support.h, after the vector types; C++17, clean under -Wall -Wextra.
#ifndef ANSOR_VECTOR_MATH_H
#define ANSOR_VECTOR_MATH_H

#include <cstdint>

#if defined(__AVX512F__) && defined(__AVX512VL__)
#define ANSOR_VMATH_SCALEF 1
#endif
#if defined(__FMA__) || defined(ANSOR_VMATH_SCALEF)
#include <immintrin.h>
#endif

namespace ansor_rt {

namespace vmath_detail {

template <int N>
using F = vec<float, N>;
template <int N>
using I = vec<int32_t, N>;
template <int N>
using U = vec<uint32_t, N>;
template <int N>
using D = vec<double, N>;
template <int N>
using L = vec<int64_t, N>;
template <int N>
using UL = vec<uint64_t, N>;

template <int N>
inline F<N> splat(float x) {
  return vbroadcast<float, N>(x);
}

template <int N>
inline D<N> splat_d(double x) {
  return vbroadcast<double, N>(x);
}

// Reinterpretations between same-sized vector types (a cast between them keeps the bits).
template <int N>
inline U<N> bits(F<N> x) {
  return (U<N>)x;
}

template <int N>
inline F<N> from_bits(U<N> x) {
  return (F<N>)x;
}

// A lane-wise clamp to [lo, hi] that leaves NaN lanes NaN (comparisons with NaN are false).
template <int N>
inline F<N> clamp(F<N> x, float lo, float hi) {
  x = x < lo ? splat<N>(lo) : x;
  return x > hi ? splat<N>(hi) : x;
}

// x with the sign bit of s.
template <int N>
inline F<N> with_sign_of(F<N> x, F<N> s) {
  return from_bits<N>((bits<N>(x) & 0x7fffffffu) | (bits<N>(s) & 0x80000000u));
}

// The float lanes of the target's widest vector registers.
constexpr int kNativeFloatLanes = kNativeVectorBytes / 4;

// Impl::eval<M> applied to x in parts of M lanes (M at most `lanes`). GCC lowers a vector wider
// than the target's registers piece by piece, but its selects (c ? a : b) and clamps lane by
// lane in scalar code: vec<float, 16> functions on AVX2 ran 5-10 times slower than two
// vec<float, 8> calls. So the functions below run on parts no wider than the registers.
template <class Impl, int lanes, int N>
inline F<N> in_parts(F<N> x) {
  constexpr int M = N < lanes ? N : lanes;
  if constexpr (M == N) {
    return Impl::template eval<N>(x);
  } else {
    F<N> r;
    for (int i = 0; i < N; i += M) {
      F<M> part;
      __builtin_memcpy(&part, reinterpret_cast<const char*>(&x) + i * sizeof(float), sizeof(part));
      part = Impl::template eval<M>(part);
      __builtin_memcpy(reinterpret_cast<char*>(&r) + i * sizeof(float), &part, sizeof(part));
    }
    return r;
  }
}

// As in_parts, for functions of two vectors.
template <class Impl, int lanes, int N>
inline F<N> in_parts(F<N> x, F<N> y) {
  constexpr int M = N < lanes ? N : lanes;
  if constexpr (M == N) {
    return Impl::template eval<N>(x, y);
  } else {
    F<N> r;
    for (int i = 0; i < N; i += M) {
      F<M> px, py;
      __builtin_memcpy(&px, reinterpret_cast<const char*>(&x) + i * sizeof(float), sizeof(px));
      __builtin_memcpy(&py, reinterpret_cast<const char*>(&y) + i * sizeof(float), sizeof(py));
      px = Impl::template eval<M>(px, py);
      __builtin_memcpy(reinterpret_cast<char*>(&r) + i * sizeof(float), &px, sizeof(px));
    }
    return r;
  }
}

// e^(hi + lo) = p 2^k, where lo is a small correction to hi (a few ulp of hi in magnitude, or
// -0 for none), added after the range reduction so that its bits survive. Cody-Waite reduction
// hi = k ln2 + r, |r| <= ln2/2 (ln2 split into 355/512, exact in any k ln2 product here, and
// the rest), then 1 + r + r^2 S(r), S of degree 4: a near-minimax fit of relative error 3.1e-9
// (scripts/fit_vector_math.py). hi must lie in [-104, 89] (callers clamp it where it may not:
// that changes no float result), so k is in [-150, 129]; NaN lanes give NaN p and an arbitrary
// k. k comes as a float and as an int32, whichever the scaling below needs (the compiler drops
// the other).
template <int N>
struct ExpReduced {
  F<N> p;
  F<N> k;
  I<N> k_int;
};

template <int N>
inline ExpReduced<N> exp_reduced(F<N> hi, F<N> lo) {
  // Adding 1.5 * 2^23 rounds hi / ln2 to an integer that lands in the low mantissa bits.
  const float shifter = 0x1.8p23f;
  const F<N> t = hi * 1.44269504088896341f + shifter;
  const F<N> k = t - shifter;
  F<N> r = hi - k * 0.693359375f;
  r = r - k * -2.12194440054690583e-4f;
  r = r + lo;
  F<N> p = splat<N>(1.381461100e-3f);
  p = p * r + 8.368710035e-3f;
  p = p * r + 4.166838741e-2f;
  p = p * r + 1.666652069e-1f;
  p = p * r + 4.999999345e-1f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return {p, k, (I<N>)(bits<N>(t) - bits<N>(splat<N>(shifter)))};
}

// 2^k as a float, for k in [-126, 127] (unsigned arithmetic: garbage k gives garbage, no UB).
template <int N>
inline F<N> pow2(I<N> k) {
  return from_bits<N>(((U<N>)k + 127u) << 23);
}

// m 2^k for k in [-150, 129] from exp_reduced (k and k_int the same integer), rounded once: a
// subnormal result is correctly rounded, one beyond the float range is infinity, NaN stays NaN.
// AVX-512 scales in one instruction (vscalefps, 4, 8 or 16 lanes); elsewhere 2^k is applied as
// two factors of about 2^(k/2), the first product exact as long as |m| >= 2^-51 where k < 0
// (true of every caller: m is near 1, or small only where k is 0). Both give the same bits.
template <int N>
inline F<N> scale_by_pow2(F<N> m, F<N> k, I<N> k_int) {
#if defined(ANSOR_VMATH_SCALEF)
  (void)k_int;
  // The masked forms with every lane selected: GCC 12's unmasked ones start from an undefined
  // register, which -Wmaybe-uninitialized reports.
  if constexpr (N == 16) {
    return (F<N>)_mm512_mask_scalef_ps((__m512)m, 0xffff, (__m512)m, (__m512)k);
  } else if constexpr (N == 8) {
    return (F<N>)_mm256_mask_scalef_ps((__m256)m, 0xff, (__m256)m, (__m256)k);
  } else if constexpr (N == 4) {
    return (F<N>)_mm_mask_scalef_ps((__m128)m, 0xf, (__m128)m, (__m128)k);
  } else {
    F<4> m4 = splat<4>(0.0f), k4 = splat<4>(0.0f);
    __builtin_memcpy(&m4, &m, sizeof(m));
    __builtin_memcpy(&k4, &k, sizeof(k));
    const F<4> r4 = (F<4>)_mm_mask_scalef_ps((__m128)m4, 0xf, (__m128)m4, (__m128)k4);
    F<N> r;
    __builtin_memcpy(&r, &r4, sizeof(r));
    return r;
  }
#else
  (void)k;
  const I<N> k1 = k_int >> 1;
  return m * pow2<N>(k1) * pow2<N>(k_int - k1);
#endif
}

// The exact product x y as hi + lo with hi = x y rounded (|lo| <= half an ulp of hi), for x, y
// whose product neither overflows nor underflows. With FMA the error is one fused multiply-add;
// without it, Dekker's product on Veltkamp halves of 12 bits.
template <int N>
inline void exact_product(F<N> x, F<N> y, F<N>& hi, F<N>& lo) {
  hi = x * y;
#if defined(__FMA__)
  // The packed instruction where one fits: GCC splits a per-lane fmaf loop into halves stored
  // through memory, and stops inlining the functions around it.
#if defined(__AVX512F__)
  if constexpr (N == 16) {
    lo = (F<N>)_mm512_fmsub_ps((__m512)x, (__m512)y, (__m512)hi);
  } else
#endif
  if constexpr (N == 8) {
    lo = (F<N>)_mm256_fmsub_ps((__m256)x, (__m256)y, (__m256)hi);
  } else if constexpr (N == 4) {
    lo = (F<N>)_mm_fmsub_ps((__m128)x, (__m128)y, (__m128)hi);
  } else {
    for (int i = 0; i < N; ++i) lo[i] = __builtin_fmaf(x[i], y[i], -hi[i]);
  }
#else
  const F<N> x_split = x * 4097.0f, y_split = y * 4097.0f;
  const F<N> x_hi = x_split - (x_split - x), y_hi = y_split - (y_split - y);
  const F<N> x_lo = x - x_hi, y_lo = y - y_hi;
  lo = ((x_hi * y_hi - hi) + x_hi * y_lo + x_lo * y_hi) + x_lo * y_lo;
#endif
}

// The upper tail of the standard normal distribution without its Gaussian factor:
// R(a) = Q(a) e^(a^2/2), Q(a) = (1 - erf(a / sqrt(2))) / 2, for 0 <= a <= 14.5, as P4(a) / Q5(a)
// with positive coefficients (no cancellation for a >= 0): a near-minimax rational fit of
// relative error 5.9e-9 (scripts/fit_vector_math.py).
template <int N>
inline F<N> normal_tail_ratio(F<N> a) {
  F<N> p = splat<N>(4.116449486e-3f);
  p = p * a + 4.063439385e-2f;
  p = p * a + 1.832389162e-1f;
  p = p * a + 4.383005316e-1f;
  p = p * a + 5.000000029e-1f;
  F<N> q = splat<N>(1.031828901e-2f);
  q = q * a + 1.018617645e-1f;
  q = q * a + 4.694805037e-1f;
  q = q * a + 1.202519612e+0f;
  q = q * a + 1.674486043e+0f;
  q = q * a + 1.0f;
  return p / q;
}

// erf(z) / z for |z| <= 0.75, as a polynomial in z^2 (near-minimax, relative error 1.4e-9).
template <int N>
inline F<N> erf_small_over_z(F<N> z2) {
  F<N> p = splat<N>(-6.749617851e-04f);
  p = p * z2 + 5.114361796e-03f;
  p = p * z2 + -2.683463375e-02f;
  p = p * z2 + 1.128337680e-01f;
  p = p * z2 + -3.761261878e-01f;
  p = p * z2 + 1.128379166e+00f;
  return p;
}

// ln(x) in double for positive finite x, to about 1e-15 relative: x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.172, whose series
// is cut after s^15 (truncation below 1e-13 relative).
template <int N>
inline D<N> log_double(D<N> x) {
  // Adding (1 - sqrt(1/2)) to the mantissa bits moves mantissas at or above sqrt(2) into the next
  // binade, so the exponent field gives e and the rest, rebased at sqrt(1/2), gives m.
  const uint64_t sqrt_half = 0x3fe6a09e667f3bcdull;
  const UL<N> u = (UL<N>)x + (0x3ff0000000000000ull - sqrt_half);
  const D<N> m = (D<N>)((u & 0x000fffffffffffffull) + sqrt_half);
  // The biased exponent placed in the low bits of 2^52 gives it as a double without a vector
  // int64 conversion (which AVX2 lacks).
  const D<N> e = (D<N>)((u >> 52) | 0x4330000000000000ull) - (0x1p52 + 1023.0);
  const D<N> f = m - 1.0;
  const D<N> s = f / (m + 1.0);
  const D<N> z = s * s;
  D<N> r = splat_d<N>(2.0 / 15.0);
  r = r * z + 2.0 / 13.0;
  r = r * z + 2.0 / 11.0;
  r = r * z + 2.0 / 9.0;
  r = r * z + 2.0 / 7.0;
  r = r * z + 2.0 / 5.0;
  r = r * z + 2.0 / 3.0;
  r = r * z;
  // 2 s + s R = f - s (f - R), since 2 s = f - s f: the leading term f is exact.
  return e * 0.69314718055994530942 + (f - s * (f - r));
}

// e^x in double for |x| <= 140, to about 1e-15 relative: x = k ln2 + r, |r| <= ln2/2, Taylor to
// r^11 (truncation below 1e-14), scaled by 2^k (a normal double for every k in range).
template <int N>
inline D<N> exp_double(D<N> x) {
  const double shifter = 0x1.8p52;
  const D<N> t = x * 1.4426950408889634074 + shifter;
  const D<N> k = t - shifter;
  const UL<N> ki = (UL<N>)t - (UL<N>)splat_d<N>(shifter);
  const D<N> r = (x - k * 0.693147180369123816490) - k * 1.90821492927058770002e-10;
  D<N> p = splat_d<N>(1.0 / 39916800.0);
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p * (D<N>)((ki + 1023u) << 52);
}

// The functions on vectors of at most the native width; the public ones below split wider
// vectors into such parts (in_parts).
struct Relu {
  // max(x, 0): NaN stays NaN, -0 stays -0.
  template <int N>
  static F<N> eval(F<N> x) {
    return x < 0.0f ? splat<N>(0.0f) : x;
  }
};

struct Floor {
  // Truncation through int32 for |x| < 2^23 (larger floats are integers already, and infinities
  // and NaN are returned as they are), one step down where truncation went up; the sign bit of
  // x is kept, which gives -0 for -0.
  template <int N>
  static F<N> eval(F<N> x) {
    const auto small = (bits<N>(x) & 0x7fffffffu) < 0x4b000000u;  // |x| < 2^23
    const F<N> t = __builtin_convertvector(__builtin_convertvector(small ? x : splat<N>(0.0f), I<N>), F<N>);
    const F<N> f = t > x ? t - 1.0f : t;
    return small ? with_sign_of<N>(f, x) : x;
  }
};

struct Ceil {
  template <int N>
  static F<N> eval(F<N> x) {
    const auto small = (bits<N>(x) & 0x7fffffffu) < 0x4b000000u;
    const F<N> t = __builtin_convertvector(__builtin_convertvector(small ? x : splat<N>(0.0f), I<N>), F<N>);
    const F<N> c = t < x ? t + 1.0f : t;
    return small ? with_sign_of<N>(c, x) : x;
  }
};

// e^x for x in [-104, 89] (or NaN).
template <int N>
inline F<N> exp_in_range(F<N> x) {
  // -0 as the correction: x + -0 == x, so the compiler drops the addition.
  const ExpReduced<N> e = exp_reduced<N>(x, splat<N>(-0.0f));
  return scale_by_pow2<N>(e.p, e.k, e.k_int);
}

struct Exp {
  template <int N>
  static F<N> eval(F<N> x) {
    return exp_in_range<N>(clamp<N>(x, -104.0f, 89.0f));
  }
};

struct Log {
  template <int N>
  static F<N> eval(F<N> x) {
    const auto subnormal = x < 0x1p-126f;
    const F<N> xs = subnormal ? x * 0x1p23f : x;
    const F<N> e_offset = subnormal ? splat<N>(-23.0f) : splat<N>(0.0f);
    // As in log_double: the offset moves mantissas at or above sqrt(2) into the next binade.
    const uint32_t sqrt_half = 0x3f3504f3u;
    const U<N> u = bits<N>(xs) + (0x3f800000u - sqrt_half);
    const F<N> e = __builtin_convertvector((I<N>)(u >> 23) - 127, F<N>) + e_offset;
    const F<N> m = from_bits<N>((u & 0x007fffffu) + sqrt_half);
    const F<N> f = m - 1.0f;
    const F<N> s = f / (f + 2.0f);
    const F<N> z = s * s;
    F<N> r = splat<N>(2.0f / 9.0f);
    r = r * z + 2.0f / 7.0f;
    r = r * z + 2.0f / 5.0f;
    r = r * z + 2.0f / 3.0f;
    r = r * z;
    const F<N> log_m = f - s * (f - r);
    const F<N> y = (log_m + e * -2.12194440054690583e-4f) + e * 0.693359375f;
    const float inf = __builtin_inff();
    const F<N> special = x == 0.0f ? splat<N>(-inf) : x < 0.0f ? splat<N>(__builtin_nanf("")) : x;
    return ((x > 0.0f) & (x < inf)) ? y : special;
  }
};

struct Tanh {
  template <int N>
  static F<N> eval(F<N> x) {
    const F<N> a = from_bits<N>(bits<N>(x) & 0x7fffffffu);
    const F<N> z = a * a;
    F<N> p = splat<N>(-5.704990366e-03f);
    p = p * z + 2.063909061e-02f;
    p = p * z + -5.373971626e-02f;
    p = p * z + 1.333144221e-01f;
    p = p * z + -3.333328194e-01f;
    const F<N> small = a + a * z * p;
    const F<N> two_a = a + a;
    const F<N> large = 1.0f - 2.0f / (exp_in_range<N>(two_a > 89.0f ? splat<N>(89.0f) : two_a) + 1.0f);
    return with_sign_of<N>(a < 0.625f ? small : large, x);
  }
};

struct Sigmoid {
  template <int N>
  static F<N> eval(F<N> x) {
    const F<N> minus_abs_x = from_bits<N>(bits<N>(x) | 0x80000000u);
    const F<N> e = exp_in_range<N>(minus_abs_x < -104.0f ? splat<N>(-104.0f) : minus_abs_x);  // e^-|x|
    const F<N> s = 1.0f / (e + 1.0f);
    return x >= 0.0f ? s : e * s;
  }
};

struct Erf {
  // Beyond 0.75 only absolute accuracy matters in 1 - erfc: z^2 needs no exact split, and
  // e^(-z^2) for z <= 4 is a normal float, a single factor 2^k.
  template <int N>
  static F<N> eval(F<N> x) {
    const F<N> a = from_bits<N>(bits<N>(x) & 0x7fffffffu);
    const F<N> small = a * erf_small_over_z<N>(a * a);
    const F<N> c = clamp<N>(a, 0.0f, 4.0f);
    const ExpReduced<N> e = exp_reduced<N>(-(c * c), splat<N>(-0.0f));
    // erfc(c) = 2 Q(c sqrt(2)).
    const F<N> erfc = normal_tail_ratio<N>(c * 1.41421356237309505f) * scale_by_pow2<N>(e.p + e.p, e.k, e.k_int);
    return with_sign_of<N>(a < 0.75f ? small : 1.0f - erfc, x);
  }
};

struct Gelu {
  // gelu(x) = relu(x) - a Q(a) with a = |x|: x - x Q(x) for x > 0, x Q(-x) otherwise. Beyond
  // a = kNormalTailLimit the negative tail a Q(a) is below FLT_MIN: it is returned as -0 rather
  // than as a subnormal, which costs each instruction that makes or reads one a microcode
  // assist (a dense layer + gelu over random data ran 1.4 times slower for it). a is clamped
  // there, so no intermediate is subnormal either.
  static constexpr float kNormalTailLimit = 0x1.a4ae0cp+3f;  // 13.146246: the last a Q(a) >= FLT_MIN
  template <int N>
  static F<N> eval(F<N> x) {
    const F<N> abs_x = from_bits<N>(bits<N>(x) & 0x7fffffffu);
    const F<N> a = abs_x > kNormalTailLimit ? splat<N>(kNormalTailLimit) : abs_x;
    F<N> sq_hi, sq_lo;  // -a^2 / 2 exactly
    exact_product<N>(a, a * -0.5f, sq_hi, sq_lo);
    const ExpReduced<N> e = exp_reduced<N>(sq_hi, sq_lo);
    // a Q(a) = a R(a) p 2^k: the product of normal factors is scaled once, at the end.
    const F<N> a_tail = scale_by_pow2<N>((normal_tail_ratio<N>(a) * e.p) * a, e.k, e.k_int);
    // x * 0 is -0 for negative x (gelu(-0) = -0) and NaN at -inf like the formula (-inf * 0).
    return (x < 0.0f ? x * 0.0f : x) - (abs_x > kNormalTailLimit ? splat<N>(0.0f) : a_tail);
  }
};

struct Pow {
  template <int N>
  static F<N> eval(F<N> x, F<N> y) {
    const float inf = __builtin_inff();
    const F<N> ax = from_bits<N>(bits<N>(x) & 0x7fffffffu);
    // ln|x| is only valid for positive finite |x| (the float -> double conversion keeps
    // subnormals); other lanes get a harmless 1 and their ln below.
    const auto finite_positive = (ax > 0.0f) & (ax < inf);
    const D<N> ln_x = log_double<N>(__builtin_convertvector(finite_positive ? ax : splat<N>(1.0f), D<N>));
    const D<N> ln_special = __builtin_convertvector(ax == 0.0f ? splat<N>(-inf) : ax, D<N>);
    D<N> t = __builtin_convertvector(y, D<N>) * (__builtin_convertvector(finite_positive, L<N>) != 0 ? ln_x : ln_special);
    // Beyond +-140 the float result is 0 or +inf anyway; NaN stays NaN.
    t = t < -140.0 ? splat_d<N>(-140.0) : t;
    t = t > 140.0 ? splat_d<N>(140.0) : t;
    F<N> r = __builtin_convertvector(exp_double<N>(t), F<N>);
    const auto y_integer = Floor::eval<N>(y) == y;
    // An odd integer is below 2^24 (every float beyond is even), where int32 conversion is exact.
    const F<N> ay = from_bits<N>(bits<N>(y) & 0x7fffffffu);
    const I<N> y_as_int = __builtin_convertvector(ay < 0x1p24f ? y : splat<N>(0.0f), I<N>);
    const auto y_odd = y_integer & ((y_as_int & 1) != 0);
    r = y_odd ? with_sign_of<N>(r, x) : r;
    r = ((x < 0.0f) & (x > -inf) & (y_integer == 0)) ? splat<N>(__builtin_nanf("")) : r;
    r = ((ax == 1.0f) & (ay == inf)) ? splat<N>(1.0f) : r;
    r = ((x != x) | (y != y)) ? x + y : r;
    return ((y == 0.0f) | (x == 1.0f)) ? splat<N>(1.0f) : r;
  }
};

} // namespace vmath_detail

// |x|: clears the sign bit (NaN payloads kept).
template <int N>
inline vec<float, N> vabs(vec<float, N> x) {
  return vmath_detail::from_bits<N>(vmath_detail::bits<N>(x) & 0x7fffffffu);
}

// max(x, 0) like relu(): NaN stays NaN, -0 stays -0.
template <int N>
inline vec<float, N> vrelu(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Relu, vmath_detail::kNativeFloatLanes, N>(x);
}

// tf32(x) lane by lane (scalar_support.h), bitwise the same.
template <int N>
inline vec<float, N> vtf32(vec<float, N> x) {
  const vmath_detail::U<N> bits = vmath_detail::bits<N>(x);
  const vmath_detail::U<N> rounded = (bits + 0x1000u) & 0xffffe000u;
  return vmath_detail::from_bits<N>((bits & 0x7f800000u) == 0x7f800000u ? bits : rounded);
}

// Correctly rounded (IEEE sqrt): the per-lane builtin becomes one packed sqrt at -O2 and above
// when errno is not set (-fno-math-errno, as kernels are compiled).
template <int N>
inline vec<float, N> vsqrt(vec<float, N> x) {
  for (int i = 0; i < N; ++i) x[i] = __builtin_sqrtf(x[i]);
  return x;
}

// 1 / sqrt(x), two correctly rounded operations like the scalar rsqrt(): bitwise the same.
template <int N>
inline vec<float, N> vrsqrt(vec<float, N> x) {
  return 1.0f / vsqrt<N>(x);
}

// Exact; floor(-0) = -0.
template <int N>
inline vec<float, N> vfloor(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Floor, vmath_detail::kNativeFloatLanes, N>(x);
}

// Exact; ceil(-0.5) = -0.
template <int N>
inline vec<float, N> vceil(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Ceil, vmath_detail::kNativeFloatLanes, N>(x);
}

// e^x; 0 below about -103.97 (subnormal results above it), +inf above about 88.72.
template <int N>
inline vec<float, N> vexp(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Exp, vmath_detail::kNativeFloatLanes, N>(x);
}

// ln(x): x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), ln m as
// f - s (f - R(s^2)) with f = m - 1, s = f / (2 + f) and R the atanh series 2 s^2/3 + 2 s^4/5 +
// ... cut after s^8 (|s| < 0.172: truncation below 2^-28), plus e ln2 in two parts.
// ln(+-0) = -inf, ln(x < 0) = NaN, ln(+inf) = +inf, NaN stays NaN.
template <int N>
inline vec<float, N> vlog(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Log, vmath_detail::kNativeFloatLanes, N>(x);
}

// tanh(x) = sign(x) tanh(|x|): below 0.625 the odd polynomial |x| + |x|^3 P(x^2) (near-minimax,
// relative error 4.4e-9), above it 1 - 2 / (e^(2|x|) + 1), which reaches 1 (e^(2|x|) overflows
// to infinity) without a special case. tanh(+-0) = +-0, tanh(+-inf) = +-1.
template <int N>
inline vec<float, N> vtanh(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Tanh, vmath_detail::kNativeFloatLanes, N>(x);
}

// 1 / (1 + e^-x) through e^-|x| like the scalar sigmoid(): nothing overflows, and for x < 0 the
// result is e^x / (1 + e^x), accurate down to the subnormals.
template <int N>
inline vec<float, N> vsigmoid(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Sigmoid, vmath_detail::kNativeFloatLanes, N>(x);
}

// erf(x) = sign(x) erf(|x|): below 0.75 |x| P(x^2), above it 1 - erfc(|x|), erfc(z) =
// 2 Q(z sqrt(2)) through the normal tail ratio R: 2 R(z sqrt(2)) e^(-z^2), with |x| clamped to
// 4, where erf rounds to 1 already. erf(+-0) = +-0, erf(+-inf) = +-1.
template <int N>
inline vec<float, N> verf(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Erf, vmath_detail::kNativeFloatLanes, N>(x);
}

// The exact GELU, x Phi(x) with Phi the standard normal distribution function: one formula for
// every x, through the upper tail Q(a) = R(a) e^(-a^2/2) at a = |x| (R the rational fit above):
// x - x Q(x) for x > 0 and x Q(-x) otherwise, so the negative tail keeps its relative accuracy
// (no 1 + erf cancels) down to FLT_MIN; results below FLT_MIN in magnitude (x < -13.146246) are
// -0, not subnormals, which are slow. a^2/2 is formed exactly and the exponential computed 2^32
// higher for that. gelu(+inf) = +inf and gelu(-inf) = NaN (as the formula, the scalar gelu()
// and the interpreter evaluate it: -inf * 0).
template <int N>
inline vec<float, N> vgelu(vec<float, N> x) {
  return vmath_detail::in_parts<vmath_detail::Gelu, vmath_detail::kNativeFloatLanes, N>(x);
}

// x^y with IEEE pow's special cases (pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN, negative x
// only with integer y, signed zeros and infinities by the parity of y). The magnitude is
// e^(y ln|x|) computed in double (ln and exp above, each to about 1e-15), so y ln|x| keeps
// enough bits for any exponent and the result is rounded once to float: within 0.5 ulp and a
// hair, subnormal and overflowing results included. Computed in parts of half the native float
// width, the lanes of a native double vector.
template <int N>
inline vec<float, N> vpow(vec<float, N> x, vec<float, N> y) {
  return vmath_detail::in_parts<vmath_detail::Pow, vmath_detail::kNativeFloatLanes / 2, N>(x, y);
}

} // namespace ansor_rt

#endif // ANSOR_VECTOR_MATH_H
