// Support code for the C++ kernels that ansor-gen emits: parallel loops over lambdas, vector
// types and their math, scoped workspace, and (scalar_support.h) Python-style integer division,
// half/bfloat16 storage conversions and activation helpers.
//
// Header-only so that kernels inline all of it. It is compiled inside users' builds with their
// warning flags, so it must stay clean under -Wall -Wextra -Wpedantic with g++ and clang++.
#ifndef ANSOR_KERNEL_SUPPORT_H
#define ANSOR_KERNEL_SUPPORT_H

#include "runtime.h"
#include "scalar_support.h"
#include "tensor_intrinsics.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

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

// The bytes of the target's widest vector registers (16 where none are known).
#if defined(__AVX512F__)
constexpr int kNativeVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kNativeVectorBytes = 32;
#else
constexpr int kNativeVectorBytes = 16;
#endif

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

// ---- Masked vectors (the partial last vector of a ragged tile) -------------------------------
// Lanes 0 .. n - 1 are loaded or stored, the others neither: a masked load leaves them 0 and
// touches no memory past lane n - 1 (masked lanes never fault, so a buffer may end there), a
// masked store leaves the memory behind them as it was. n may be anything: at most 0 masks every
// lane, at least N none. AVX-512 masks (AVX512VL for 128 and 256 bits), AVX maskload/maskstore
// with AVX2's compares, and elsewhere the active lanes copied as bytes; vectors wider than the
// target's are handled as two halves.

namespace detail {

// Lanes 0 .. n - 1 of a mask of N lanes as bits.
template <int N>
inline unsigned long long lane_bits(int64_t n) {
  if (n <= 0) return 0;
  if (n >= N) return N == 64 ? ~0ULL : (1ULL << N) - 1;
  return (1ULL << n) - 1;
}

#if defined(__AVX2__) || defined(__AVX512F__)
constexpr bool kMaskedInstructions = true;
#else
constexpr bool kMaskedInstructions = false;
#endif

// Whether vectors of N lanes of T have masked loads and stores on the target.
template <class T, int N>
constexpr bool native_masked() {
  [[maybe_unused]] constexpr int bytes = N * static_cast<int>(sizeof(T));
  if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) return false;
#if defined(__AVX512F__)
  if (bytes == 64) return true;
#endif
#if defined(__AVX512VL__) || defined(__AVX2__)
  if (bytes == 16 || bytes == 32) return true;
#endif
  return false;
}

#if defined(__AVX2__) && !defined(__AVX512VL__)
// The AVX2 mask of lanes 0 .. n - 1: the sign bit of each active lane's element set.
inline __m256i lane_mask_epi32(int64_t n) {
  const int k = n <= 0 ? 0 : n >= 8 ? 8 : static_cast<int>(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i lane_mask_epi64(int64_t n) {
  const long long k = n <= 0 ? 0 : n >= 4 ? 4 : n;
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3));
}
#endif

template <class T, int N>
inline vec<T, N> native_load_masked([[maybe_unused]] const T* p, [[maybe_unused]] int64_t n) {
  [[maybe_unused]] constexpr int bytes = N * static_cast<int>(sizeof(T));
  [[maybe_unused]] const unsigned long long bits = lane_bits<N>(n);
#if defined(__AVX512F__)
  if constexpr (bytes == 64) {
    if constexpr (std::is_same_v<T, float>) return (vec<T, N>)_mm512_maskz_loadu_ps(static_cast<__mmask16>(bits), p);
    else return (vec<T, N>)_mm512_maskz_loadu_pd(static_cast<__mmask8>(bits), p);
  }
#endif
#if defined(__AVX512VL__)
  if constexpr (bytes == 32) {
    if constexpr (std::is_same_v<T, float>) return (vec<T, N>)_mm256_maskz_loadu_ps(static_cast<__mmask8>(bits), p);
    else return (vec<T, N>)_mm256_maskz_loadu_pd(static_cast<__mmask8>(bits), p);
  }
  if constexpr (bytes == 16) {
    if constexpr (std::is_same_v<T, float>) return (vec<T, N>)_mm_maskz_loadu_ps(static_cast<__mmask8>(bits), p);
    else return (vec<T, N>)_mm_maskz_loadu_pd(static_cast<__mmask8>(bits), p);
  }
#elif defined(__AVX2__)
  if constexpr (bytes == 32) {
    if constexpr (std::is_same_v<T, float>) return (vec<T, N>)_mm256_maskload_ps(p, lane_mask_epi32(n));
    else return (vec<T, N>)_mm256_maskload_pd(p, lane_mask_epi64(n));
  }
  if constexpr (bytes == 16) {
    if constexpr (std::is_same_v<T, float>) return (vec<T, N>)_mm_maskload_ps(p, _mm256_castsi256_si128(lane_mask_epi32(n)));
    else return (vec<T, N>)_mm_maskload_pd(p, _mm256_castsi256_si128(lane_mask_epi64(n)));
  }
#endif
  static_assert(native_masked<T, N>(), "no masked load of this width on this target");
  return vec<T, N>{};
}

template <class T, int N>
inline void native_store_masked([[maybe_unused]] T* p, [[maybe_unused]] vec<T, N> v, [[maybe_unused]] int64_t n) {
  [[maybe_unused]] constexpr int bytes = N * static_cast<int>(sizeof(T));
  [[maybe_unused]] const unsigned long long bits = lane_bits<N>(n);
#if defined(__AVX512F__)
  if constexpr (bytes == 64) {
    if constexpr (std::is_same_v<T, float>) _mm512_mask_storeu_ps(p, static_cast<__mmask16>(bits), (__m512)v);
    else _mm512_mask_storeu_pd(p, static_cast<__mmask8>(bits), (__m512d)v);
    return;
  }
#endif
#if defined(__AVX512VL__)
  if constexpr (bytes == 32) {
    if constexpr (std::is_same_v<T, float>) _mm256_mask_storeu_ps(p, static_cast<__mmask8>(bits), (__m256)v);
    else _mm256_mask_storeu_pd(p, static_cast<__mmask8>(bits), (__m256d)v);
    return;
  }
  if constexpr (bytes == 16) {
    if constexpr (std::is_same_v<T, float>) _mm_mask_storeu_ps(p, static_cast<__mmask8>(bits), (__m128)v);
    else _mm_mask_storeu_pd(p, static_cast<__mmask8>(bits), (__m128d)v);
    return;
  }
#elif defined(__AVX2__)
  if constexpr (bytes == 32) {
    if constexpr (std::is_same_v<T, float>) _mm256_maskstore_ps(p, lane_mask_epi32(n), (__m256)v);
    else _mm256_maskstore_pd(p, lane_mask_epi64(n), (__m256d)v);
    return;
  }
  if constexpr (bytes == 16) {
    if constexpr (std::is_same_v<T, float>) _mm_maskstore_ps(p, _mm256_castsi256_si128(lane_mask_epi32(n)), (__m128)v);
    else _mm_maskstore_pd(p, _mm256_castsi256_si128(lane_mask_epi64(n)), (__m128d)v);
    return;
  }
#endif
  static_assert(native_masked<T, N>(), "no masked store of this width on this target");
}

inline size_t active_bytes(int64_t n, int lanes, size_t lane_bytes) {
  return n <= 0 ? 0 : static_cast<size_t>(n < lanes ? n : lanes) * lane_bytes;
}

}  // namespace detail

template <class T, int N>
inline vec<T, N> vload_masked(const T* p, int64_t n) {
  if constexpr (detail::native_masked<T, N>()) {
    return detail::native_load_masked<T, N>(p, n);
  } else if constexpr (detail::kMaskedInstructions && N >= 2 && N * sizeof(T) > static_cast<size_t>(kNativeVectorBytes)) {
    const vec<T, N / 2> lo = vload_masked<T, N / 2>(p, n), hi = vload_masked<T, N / 2>(p + N / 2, n - N / 2);
    vec<T, N> v;
    std::memcpy(&v, &lo, sizeof(lo));
    std::memcpy(reinterpret_cast<char*>(&v) + sizeof(lo), &hi, sizeof(hi));
    return v;
  } else {
    vec<T, N> v{};
    std::memcpy(&v, p, detail::active_bytes(n, N, sizeof(T)));
    return v;
  }
}

template <class T, int N>
inline void vstore_masked(T* p, vec<T, N> v, int64_t n) {
  if constexpr (detail::native_masked<T, N>()) {
    detail::native_store_masked<T, N>(p, v, n);
  } else if constexpr (detail::kMaskedInstructions && N >= 2 && N * sizeof(T) > static_cast<size_t>(kNativeVectorBytes)) {
    vec<T, N / 2> lo, hi;
    std::memcpy(&lo, &v, sizeof(lo));
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof(lo), sizeof(hi));
    vstore_masked<T, N / 2>(p, lo, n);
    vstore_masked<T, N / 2>(p + N / 2, hi, n - N / 2);
  } else {
    std::memcpy(p, &v, detail::active_bytes(n, N, sizeof(T)));
  }
}

// ---- bf16 vectors ----------------------------------------------------------------------------
// Values of bf16 tensors are computed in float, a vec<float, N>; they are stored as the upper
// halves of the floats' bits, rounded to nearest-even as f32_to_bf16 rounds (NaNs stay quiet
// NaNs), and loaded back exactly.

template <int N>
inline vec<float, N> vbf16_to_f32(vec<uint16_t, N> bits) {
  const vec<uint32_t, N> wide = __builtin_convertvector(bits, vec<uint32_t, N>) << 16;
  vec<float, N> v;
  std::memcpy(&v, &wide, sizeof(v));
  return v;
}

template <int N>
inline vec<uint16_t, N> vf32_to_bf16(vec<float, N> x) {
  vec<uint32_t, N> bits;
  std::memcpy(&bits, &x, sizeof(bits));
  const vec<uint32_t, N> rounded = (bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16;
  const vec<uint32_t, N> quiet_nan = (bits >> 16) | 0x40u;
  return __builtin_convertvector((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded, vec<uint16_t, N>);
}

template <int N>
inline vec<float, N> vround_bf16(vec<float, N> x) {
  return vbf16_to_f32<N>(vf32_to_bf16<N>(x));
}

template <int N>
inline vec<float, N> vload_bf16(const uint16_t* p) {
  return vbf16_to_f32<N>(vload<uint16_t, N>(p));
}

template <int N>
inline vec<float, N> vload_bf16_masked(const uint16_t* p, int64_t n) {
  return vbf16_to_f32<N>(vload_masked<uint16_t, N>(p, n));
}

template <int N>
inline void vstore_bf16(uint16_t* p, vec<float, N> v) {
  vstore<uint16_t, N>(p, vf32_to_bf16<N>(v));
}

template <int N>
inline void vstore_bf16_masked(uint16_t* p, vec<float, N> v, int64_t n) {
  vstore_masked<uint16_t, N>(p, vf32_to_bf16<N>(v), n);
}

// ---- Memory hints (a stage's prefetch_bytes and stream_stores pragmas) -----------------------

// Asks for the cache line `bytes` past p ahead of its loads. A hint: it never faults, so the
// address may lie beyond the buffer (computed as an integer, not a pointer into it).
inline void prefetch(const void* p, int64_t bytes) {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes)), 0, 3);
}

namespace detail {
// The widest streaming store: x86's vector registers, none elsewhere.
#if defined(__SSE2__)
constexpr size_t kStreamBytes = kNativeVectorBytes;
#else
constexpr size_t kStreamBytes = 0;
#endif

// One non-temporal store of `Bytes` (16, 32 or 64, as the target has them) to `out`, aligned to
// its size.
template <size_t Bytes>
inline void stream_chunk(char* out, const char* in) {
#if defined(__AVX512F__)
  if constexpr (Bytes == 64) {
    __m512i x;
    std::memcpy(&x, in, Bytes);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out), x);
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (Bytes == 32) {
    __m256i x;
    std::memcpy(&x, in, Bytes);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out), x);
    return;
  }
#endif
#if defined(__SSE2__)
  if constexpr (Bytes == 16) {
    __m128i x;
    std::memcpy(&x, in, Bytes);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out), x);
    return;
  }
#endif
  std::memcpy(out, in, Bytes);
}

}  // namespace detail

// vstore with non-temporal stores (x86: movnt), which write whole lines to memory without
// reading them into the caches first: an output written once and not read back by the kernel
// costs its bytes once instead of twice. Each piece of the target's vector width (or the whole
// vector, when narrower) is streamed where its address is aligned to its size, as in buffers
// from the measurement worker or aligned allocators; elsewhere the vector is stored normally.
// Pieces of 16 bytes at a std::vector's 16-byte alignment were measured slower than ordinary
// stores for gelu (22.5 against 30 GB/s on the Xeon, 8192x2048). store_fence() orders the
// streamed stores before what follows (each parallel chunk and the kernel end with one).
template <class T, int N>
inline void vstore_stream(T* p, vec<T, N> v) {
  constexpr size_t kChunk = sizeof(v) < detail::kStreamBytes ? sizeof(v) : detail::kStreamBytes;
  if constexpr (kChunk >= 16) {
    if ((reinterpret_cast<uintptr_t>(p) & (kChunk - 1)) == 0) {
      char* out = reinterpret_cast<char*>(p);
      const char* in = reinterpret_cast<const char*>(&v);
      for (size_t k = 0; k < sizeof(v); k += kChunk) detail::stream_chunk<kChunk>(out + k, in + k);
      return;
    }
  }
  vstore<T, N>(p, v);
}

inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
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
