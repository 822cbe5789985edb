// Support code for the C++ kernels that ansor-gen emits: parallel loops over lambdas, Python-style
// integer division, half/bfloat16 storage conversions, activation helpers and scoped workspace.
//
// Header-only so that kernels inline all of it. It is compiled inside users' builds with their
// warning flags, so it must stay clean under -Wall -Wextra -Wpedantic with g++ and clang++.
#ifndef ANSOR_KERNEL_SUPPORT_H
#define ANSOR_KERNEL_SUPPORT_H

#include "runtime.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

// Loop hints for loops the code generator could not turn into vector or unrolled code itself.
// A hint the compiler cannot follow is not worth a warning in a generated kernel (this header
// is included by generated kernel sources only).
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#define ANSOR_VECTORIZE_LOOP _Pragma("clang loop vectorize(enable) interleave(enable)")
#define ANSOR_UNROLL_LOOP _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define ANSOR_VECTORIZE_LOOP _Pragma("GCC ivdep")
#define ANSOR_UNROLL_LOOP _Pragma("GCC unroll 64")
#else
#define ANSOR_VECTORIZE_LOOP
#define ANSOR_UNROLL_LOOP
#endif

namespace ansor_rt {

// ---- Parallel loops ---------------------------------------------------------------------------

namespace detail {

// Adapts a callable to the runtime's C task signature. noexcept because an exception cannot
// cross the C runtime (other threads would still be running the loop): a throwing body
// terminates the program.
template <class Body>
void run_parallel_body(int64_t begin, int64_t end, void* context) noexcept {
  (*static_cast<Body*>(context))(begin, end);
}

} // namespace detail

// Runs body(begin, end) over contiguous chunks of [0, n) on the runtime's threads. The callable
// stays on the caller's stack and is passed by address: no copy, no heap allocation.
template <class F>
int parallel_for(int64_t n, F&& body) {
  using Body = std::remove_reference_t<F>;
  void* context = const_cast<std::remove_cv_t<Body>*>(std::addressof(body));
  return ansor_parallel_for(n, &detail::run_parallel_body<Body>, context);
}

// ---- Integer division with Python semantics ---------------------------------------------------
// Tensor index arithmetic is defined with floor division (the quotient rounds toward -inf and
// the remainder takes the sign of the divisor), while C++ truncates toward zero. Overflowing
// cases (the minimum value divided by -1) are as undefined as in C++.

template <class T>
constexpr T floordiv(T a, T b) {
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
constexpr T floormod(T a, T b) {
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
inline float fmod_floor(float a, float b) { return a - std::floor(a / b) * b; }
inline double fmod_floor(double a, double b) { return a - std::floor(a / b) * b; }

// ---- Vectors --------------------------------------------------------------------------------
// Vectorised loops become arithmetic on GCC/Clang vector types, which both compilers lower to
// the target's vector instructions (AVX-512, AVX2, NEON, ...) whatever the lane count. Loads and
// stores go through memcpy: any alignment works and it compiles to plain vector moves.

template <class T, int N>
struct VecType {
  static_assert((N & (N - 1)) == 0, "vector lengths are powers of two");
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};

template <class T, int N>
using vec = typename VecType<T, N>::type;

template <class T, int N>
inline vec<T, N> vload(const T* p) {
  vec<T, N> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <class T, int N>
inline void vstore(T* p, vec<T, N> v) {
  std::memcpy(p, &v, sizeof(v));
}

template <class T, int N>
inline vec<T, N> vbroadcast(T x) {
  vec<T, N> v;
  for (int i = 0; i < N; ++i) v[i] = x;
  return v;
}

// Applies a scalar function to every lane (for what has no vector form: f64 math functions).
template <class T, int N, class F>
inline vec<T, N> vmap(vec<T, N> v, F f) {
  for (int i = 0; i < N; ++i) v[i] = f(v[i]);
  return v;
}

template <class T, int N>
inline vec<T, N> vmin(vec<T, N> a, vec<T, N> b) {
  return a < b ? a : b;
}

template <class T, int N>
inline vec<T, N> vmax(vec<T, N> a, vec<T, N> b) {
  return a > b ? a : b;
}

// Horizontal reductions of the N partial results at p (the lanes a vectorised partial
// reduction leaves, often several vectors' worth), which generated code combines into the
// reduction's result. Whole vectors of W lanes (the largest power of two up to 16 dividing N)
// are first combined lane by lane, N / W - 1 vector operations, then the W lanes as a balanced
// tree, log2(W) dependent steps where a chain takes N - 1, its halves independent. The order of
// a float sum or product changes within the reduction's tolerance; min and max combine as
// std::min and std::max do.
template <int N, class T, class Op>
inline T reduce_tree(const T* p, Op op) {
  if constexpr (N == 1) {
    return p[0];
  } else {
    return op(reduce_tree<N / 2>(p, op), reduce_tree<N - N / 2>(p + N / 2, op));
  }
}

template <int N>
constexpr int whole_vector_lanes() {
  int w = 1;
  while (w < 16 && N % (2 * w) == 0) w *= 2;
  return w;
}

enum class LaneReduction { Add, Mul, Min, Max };

// Lane by lane as std::min and std::max choose: b only where it compares strictly below
// (above) a, so the first of equal or unordered values wins. Vectors are combined in place,
// never passed by value, so that translation units without the wide vector ISA stay ABI-clean.
template <LaneReduction R, class T>
inline T combine(T a, T b) {
  if constexpr (R == LaneReduction::Add) return a + b;
  else if constexpr (R == LaneReduction::Mul) return a * b;
  else if constexpr (R == LaneReduction::Min) return b < a ? b : a;
  else return a < b ? b : a;
}

template <LaneReduction R, int N, class T>
inline T reduce_lanes(const T* p) {
  constexpr int W = whole_vector_lanes<N>();
  auto op = [](T a, T b) { return combine<R>(a, b); };
  if constexpr (W < 4 || N == W) {
    return reduce_tree<N>(p, op);
  } else {
    vec<T, W> folded, next;
    std::memcpy(&folded, p, sizeof(folded));
    for (int i = W; i < N; i += W) {
      std::memcpy(&next, p + i, sizeof(next));
      if constexpr (R == LaneReduction::Add) folded += next;
      else if constexpr (R == LaneReduction::Mul) folded *= next;
      else if constexpr (R == LaneReduction::Min) folded = next < folded ? next : folded;
      else folded = folded < next ? next : folded;
    }
    T lanes[W];
    std::memcpy(lanes, &folded, sizeof(folded));
    return reduce_tree<W>(lanes, op);
  }
}

template <class T, int N>
inline T vreduce_add(const T* p) {
  return reduce_lanes<LaneReduction::Add, N>(p);
}

template <class T, int N>
inline T vreduce_mul(const T* p) {
  return reduce_lanes<LaneReduction::Mul, N>(p);
}

template <class T, int N>
inline T vreduce_min(const T* p) {
  return reduce_lanes<LaneReduction::Min, N>(p);
}

template <class T, int N>
inline T vreduce_max(const T* p) {
  return reduce_lanes<LaneReduction::Max, N>(p);
}

} // namespace ansor_rt

// Vector forms of the math functions (vexp, verf, ...), on the vector types above.
#include "vector_math.h"

namespace ansor_rt {

// ---- Wrapping integer arithmetic ------------------------------------------------------------
// Tensor arithmetic on i32 and i64 wraps around on overflow (two's complement, as in numpy);
// in C++ signed overflow is undefined, so it is done in the unsigned type.

template <class T>
constexpr T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}

template <class T>
constexpr T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}

template <class T>
constexpr T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// ---- Half-precision storage -------------------------------------------------------------------
// Kernels store f16 and bf16 tensors as uint16_t and compute in float. The conversions are
// plain bit manipulation so they behave the same with every compiler and target, whether or not
// it has _Float16. Widening is exact (NaN payloads included); narrowing rounds to nearest-even,
// overflows to infinity and turns NaNs into quiet NaNs of the same sign.

namespace detail {

inline uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Rounds `kept` (the bits that remain after dropping the low bits) to nearest-even, given the
// dropped bits and the value of half a unit of `kept`.
constexpr uint32_t round_nearest_even(uint32_t kept, uint32_t dropped, uint32_t half) {
  return kept + ((dropped > half || (dropped == half && (kept & 1u) != 0)) ? 1u : 0u);
}

} // namespace detail

inline float f16_to_f32(uint16_t half) {
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

inline uint16_t f32_to_f16(float value) {
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
inline float bf16_to_f32(uint16_t bf16) {
  return detail::float_of(static_cast<uint32_t>(bf16) << 16);
}

inline uint16_t f32_to_bf16(float value) {
  const uint32_t bits = detail::bits_of(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: set the quiet bit so it cannot become infinity.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>(detail::round_nearest_even(bits >> 16, bits & 0xffffu, 0x8000u));
}

// ---- Activations and elementwise math ---------------------------------------------------------

// 1 / (1 + exp(-x)), evaluated through exp(-|x|) so that no intermediate overflows.
inline float sigmoid(float x) {
  const float e = std::exp(-std::fabs(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

inline double sigmoid(double x) {
  const double e = std::exp(-std::fabs(x));
  const double s = 1.0 / (1.0 + e);
  return x >= 0.0 ? s : e * s;
}

// The exact (erf) form of GELU, not the tanh approximation.
inline float gelu(float x) { return x * 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)); }
inline double gelu(double x) { return x * 0.5 * (1.0 + std::erf(x * 0.70710678118654752440)); }

inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

// max(x, 0); a NaN input stays NaN.
template <class T>
constexpr T relu(T x) {
  return x < T(0) ? T(0) : x;
}

// ---- Scoped workspace -------------------------------------------------------------------------

// Hands out runtime workspace blocks and frees all of them when it goes out of scope, so a
// kernel's early returns cannot leak. The bookkeeping is a fixed array: no heap allocation
// besides the blocks themselves.
class Workspace {
public:
  static constexpr int kCapacity = 16;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  ~Workspace() {
    // Newest first, so the per-thread cache keeps the blocks most likely to be asked for again.
    while (count_ > 0)
      ansor_workspace_free(blocks_[--count_]);
  }

  // A 64-byte aligned block of count elements, or nullptr when memory is exhausted, the size
  // overflows, or kCapacity blocks are already held.
  template <class T>
  T* alloc(size_t count) {
    static_assert(alignof(T) <= 64, "workspace blocks are 64-byte aligned");
    if (count_ == kCapacity || count > SIZE_MAX / sizeof(T))
      return nullptr;
    void* block = ansor_workspace_alloc(count * sizeof(T));
    if (block == nullptr)
      return nullptr;
    blocks_[count_++] = block;
    return static_cast<T*>(block);
  }

private:
  void* blocks_[kCapacity] = {};
  int count_ = 0;
};

} // namespace ansor_rt

#endif // ANSOR_KERNEL_SUPPORT_H
