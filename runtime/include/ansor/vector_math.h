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

// e^(hi + lo), where lo is a small correction to hi (at most a few ulp of hi in magnitude, or
// -0 for none): it is added after the range reduction so that its bits survive. The result is
// scaled by 2^scale_log2 (|scale_log2| <= 24), for callers whose intermediate would otherwise
// be subnormal and lose bits. Cody-Waite
// reduction hi = k ln2 + r, |r| <= ln2/2 (ln2 split into 355/512, exact in any k ln2 product
// here, and the rest), then the degree-7 Taylor polynomial of e^r (truncation error below
// 2^-27 relative) and a scaling by 2^k.
template <int N>
inline F<N> exp_parts(F<N> hi, F<N> lo, int scale_log2 = 0) {
  // Below -104 the result rounds to 0 and above 89 to infinity: clamping keeps k in
  // [-150, 129] without changing any result.
  hi = clamp<N>(hi, -104.0f, 89.0f);
  // Adding 1.5 * 2^23 rounds hi / ln2 to an integer that lands in the low mantissa bits.
  const float shifter = 0x1.8p23f;
  const F<N> t = hi * 1.44269504088896341f + shifter;
  const F<N> k = t - shifter;
  const I<N> ki = (I<N>)(bits<N>(t) - bits<N>(splat<N>(shifter))) + scale_log2;
  F<N> r = hi - k * 0.693359375f;
  r = r - k * -2.12194440054690583e-4f;
  r = r + lo;
  F<N> p = splat<N>(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^k as two factors, each a normal float for every k in range: a product underflows to a
  // correctly rounded subnormal or overflows to infinity instead of wrapping the exponent.
  // Unsigned arithmetic: NaN lanes carry garbage k, harmlessly (p is NaN there).
  const I<N> k1 = ki >> 1;
  const U<N> e1 = ((U<N>)k1 + 127u) << 23;
  const U<N> e2 = ((U<N>)(ki - k1) + 127u) << 23;
  return p * from_bits<N>(e1) * from_bits<N>(e2);
}

// The continuation of erfc beyond 0.75: erfc(z) = t e^(-z^2 + V(t)) with t = 2 / (2 + z), V a
// degree-9 least-squares (Lawson, near-minimax) fit on z in [0.75, 10.5] with absolute error
// 1.1e-9 (so relative error of erfc), fitted for this header in 40-digit arithmetic. z^2 is given
// as sq_hi + sq_lo so that callers that need relative accuracy far in the tail can pass it
// exactly; the result is scaled by 2^scale_log2 as in exp_parts.
template <int N>
inline F<N> erfc_tail(F<N> z, F<N> sq_hi, F<N> sq_lo, int scale_log2 = 0) {
  const F<N> t = 2.0f / (z + 2.0f);
  F<N> v = splat<N>(2.364037888e-01f);
  v = v * t + -1.126023440e+00f;
  v = v * t + 2.085708296e+00f;
  v = v * t + -1.785467205e+00f;
  v = v * t + 7.089765714e-01f;
  v = v * t + -3.644243437e-01f;
  v = v * t + 1.426894877e-01f;
  v = v * t + 3.670315273e-01f;
  v = v * t + 1.000610927e+00f;
  v = v * t + -1.265532481e+00f;
  // v - sq_hi rounded, and its rounding error exactly (Knuth's two-sum), goes with sq_lo.
  const F<N> hi = v - sq_hi;
  const F<N> v_part = hi + sq_hi;
  const F<N> rounding = (v - v_part) - (sq_hi + (hi - v_part));
  return t * exp_parts<N>(hi, rounding - sq_lo, scale_log2);
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

} // namespace vmath_detail

// |x|: clears the sign bit (NaN payloads kept).
template <int N>
inline vec<float, N> vabs(vec<float, N> x) {
  return vmath_detail::from_bits<N>(vmath_detail::bits<N>(x) & 0x7fffffffu);
}

// max(x, 0) like relu(): NaN stays NaN, -0 stays -0.
template <int N>
inline vec<float, N> vrelu(vec<float, N> x) {
  return x < 0.0f ? vmath_detail::splat<N>(0.0f) : x;
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

// Exact. Truncation through int32 for |x| < 2^23 (larger floats are integers already, and
// infinities and NaN are returned as they are), one step down where truncation went up; the
// sign bit of x is kept, which gives -0 for -0 and floor(-0) = -0.
template <int N>
inline vec<float, N> vfloor(vec<float, N> x) {
  using namespace vmath_detail;
  const auto small = vabs<N>(x) < 0x1p23f;
  const F<N> t = __builtin_convertvector(__builtin_convertvector(small ? x : splat<N>(0.0f), I<N>), F<N>);
  const F<N> f = t > x ? t - 1.0f : t;
  return small ? with_sign_of<N>(f, x) : x;
}

// Exact, as vfloor; ceil(-0.5) = -0.
template <int N>
inline vec<float, N> vceil(vec<float, N> x) {
  using namespace vmath_detail;
  const auto small = vabs<N>(x) < 0x1p23f;
  const F<N> t = __builtin_convertvector(__builtin_convertvector(small ? x : splat<N>(0.0f), I<N>), F<N>);
  const F<N> c = t < x ? t + 1.0f : t;
  return small ? with_sign_of<N>(c, x) : x;
}

// e^x; 0 below about -103.97 (subnormal results above it), +inf above about 88.72.
template <int N>
inline vec<float, N> vexp(vec<float, N> x) {
  // -0 as the correction: x + -0 == x, so the compiler drops the addition.
  return vmath_detail::exp_parts<N>(x, vmath_detail::splat<N>(-0.0f));
}

// ln(x): x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), ln m as
// f - s (f - R(s^2)) with f = m - 1, s = f / (2 + f) and R the atanh series 2 s^2/3 + 2 s^4/5 +
// ... cut after s^8 (|s| < 0.172: truncation below 2^-28), plus e ln2 in two parts.
// ln(+-0) = -inf, ln(x < 0) = NaN, ln(+inf) = +inf, NaN stays NaN.
template <int N>
inline vec<float, N> vlog(vec<float, N> x) {
  using namespace vmath_detail;
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

// tanh(x) = sign(x) tanh(|x|): below 0.625 the odd polynomial |x| + |x|^3 P(x^2) (near-minimax,
// relative error 4.4e-9), above it 1 - 2 / (e^(2|x|) + 1), which reaches 1 (e^(2|x|) overflows
// to infinity) without a special case. tanh(+-0) = +-0, tanh(+-inf) = +-1.
template <int N>
inline vec<float, N> vtanh(vec<float, N> x) {
  using namespace vmath_detail;
  const F<N> a = vabs<N>(x);
  const F<N> z = a * a;
  F<N> p = splat<N>(-5.704990366e-03f);
  p = p * z + 2.063909061e-02f;
  p = p * z + -5.373971626e-02f;
  p = p * z + 1.333144221e-01f;
  p = p * z + -3.333328194e-01f;
  const F<N> small = a + a * z * p;
  const F<N> large = 1.0f - 2.0f / (vexp<N>(a + a) + 1.0f);
  return with_sign_of<N>(a < 0.625f ? small : large, x);
}

// 1 / (1 + e^-x) through e^-|x| like the scalar sigmoid(): nothing overflows, and for x < 0 the
// result is e^x / (1 + e^x), accurate down to the subnormals.
template <int N>
inline vec<float, N> vsigmoid(vec<float, N> x) {
  const vec<float, N> e = vexp<N>(-vabs<N>(x));
  const vec<float, N> s = 1.0f / (e + 1.0f);
  return x >= 0.0f ? s : e * s;
}

// erf(x) = sign(x) erf(|x|): below 0.75 |x| P(x^2), above it 1 - erfc(|x|) from erfc_tail with
// |x| clamped to 4, where erf rounds to 1 already. erf(+-0) = +-0, erf(+-inf) = +-1.
template <int N>
inline vec<float, N> verf(vec<float, N> x) {
  using namespace vmath_detail;
  const F<N> a = vabs<N>(x);
  const F<N> z2 = a * a;
  const F<N> small = a * erf_small_over_z<N>(z2);
  // Only absolute accuracy matters in 1 - erfc: z^2 needs no exact split.
  const F<N> c = clamp<N>(a, 0.0f, 4.0f);
  const F<N> large = 1.0f - erfc_tail<N>(c, c * c, splat<N>(0.0f));
  return with_sign_of<N>(a < 0.75f ? small : large, x);
}

// The exact GELU, x (1 + erf(x / sqrt(2))) / 2. With z = x / sqrt(2): for |z| < 0.75 as
// x/2 (1 + z P(z^2)); beyond it x - x/2 erfc(z) for x > 0 and x/2 erfc(-z) for x < 0, which
// keeps relative accuracy in the negative tail where 1 + erf(z) would cancel. There z^2 = x^2/2
// is formed exactly: x split into 12 high bits (whose square is exact) and the rest. x is clamped
// to +-15 inside erfc, beyond which gelu(x) is x or -0. gelu(+inf) = +inf and gelu(-inf) = NaN
// (as the formula, the scalar gelu() and the interpreter evaluate it: -inf * 0).
template <int N>
inline vec<float, N> vgelu(vec<float, N> x) {
  using namespace vmath_detail;
  const F<N> half_x = x * 0.5f;
  const F<N> z = x * 0.70710678118654752f;
  const F<N> small = half_x * (1.0f + z * erf_small_over_z<N>(z * z));
  const F<N> xc = clamp<N>(x, -15.0f, 15.0f);
  const F<N> x_hi = from_bits<N>(bits<N>(xc) & 0xfffff000u);
  const F<N> x_lo = xc - x_hi;
  const F<N> sq_hi = (x_hi * x_hi) * 0.5f;
  const F<N> sq_lo = (x_lo * (xc + x_hi)) * 0.5f;
  // erfc 2^24: near x = -13 the result is normal but e^(-x^2/2) is not; one rounding at the end.
  const F<N> erfc = erfc_tail<N>(vabs<N>(xc) * 0.70710678118654752f, sq_hi, sq_lo, 24);
  // Below -15 gelu is -0, and NaN at -inf like the formula (-inf * 0).
  const F<N> negative = x < -15.0f ? half_x * 0.0f : (half_x * erfc) * 0x1p-24f;
  const F<N> large = x > 0.0f ? x - ((xc * 0.5f) * erfc) * 0x1p-24f : negative;
  return vabs<N>(z) < 0.75f ? small : large;
}

// x^y with IEEE pow's special cases (pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN, negative x
// only with integer y, signed zeros and infinities by the parity of y). The magnitude is
// e^(y ln|x|) computed in double (ln and exp above, each to about 1e-15), so y ln|x| keeps
// enough bits for any exponent and the result is rounded once to float: within 0.5 ulp and a
// hair, subnormal and overflowing results included.
template <int N>
inline vec<float, N> vpow(vec<float, N> x, vec<float, N> y) {
  using namespace vmath_detail;
  const float inf = __builtin_inff();
  const F<N> ax = vabs<N>(x);
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
  const F<N> y_int_part = vfloor<N>(y);
  const auto y_integer = y_int_part == y;
  // An odd integer is below 2^24 (every float beyond is even), where int32 conversion is exact.
  const I<N> y_as_int = __builtin_convertvector(vabs<N>(y) < 0x1p24f ? y : splat<N>(0.0f), I<N>);
  const auto y_odd = y_integer & ((y_as_int & 1) != 0);
  r = y_odd ? with_sign_of<N>(r, x) : r;
  r = ((x < 0.0f) & (x > -inf) & (y_integer == 0)) ? splat<N>(__builtin_nanf("")) : r;
  r = ((ax == 1.0f) & (vabs<N>(y) == inf)) ? splat<N>(1.0f) : r;
  r = ((x != x) | (y != y)) ? x + y : r;
  return ((y == 0.0f) | (x == 1.0f)) ? splat<N>(1.0f) : r;
}

} // namespace ansor_rt

#endif // ANSOR_VECTOR_MATH_H
