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
//
// The AMX wrappers (amx_dot_*) multiply whole tiles instead: 16 or 32 rows of A by a packed block
// of B into 16 or 32 columns of C's accumulators, between amx_begin and amx_end. They exist where
// the compiler targets AMX (-mamx-tile with -mamx-bf16 or -mamx-int8, as -march=sapphirerapids
// has them) and, for tests on machines without AMX, with ANSOR_AMX_EMULATION defined: the same
// code then runs on the emulated intrinsics of <ansor_amx_emulation.h> (tests/amx_emulation/
// include). The permission functions below them exist everywhere, in the runtime library.
#ifndef ANSOR_TENSOR_INTRINSICS_H
#define ANSOR_TENSOR_INTRINSICS_H

#include <cstdint>
#include <cstring>

// Which AMX wrappers this translation unit has. GCC names the features __AMX_TILE__, clang 14
// __AMXTILE__.
#if defined(ANSOR_AMX_EMULATION) || defined(__AMX_TILE__) || defined(__AMXTILE__)
#define ANSOR_RT_AMX_TILE 1
#if defined(ANSOR_AMX_EMULATION) || defined(__AMX_BF16__) || defined(__AMXBF16__)
#define ANSOR_RT_AMX_BF16 1
#endif
#if defined(ANSOR_AMX_EMULATION) || defined(__AMX_INT8__) || defined(__AMXINT8__)
#define ANSOR_RT_AMX_INT8 1
#endif
#endif

#if (defined(__AVX512F__) && (defined(__AVX512BF16__) || defined(__AVX512VNNI__))) || defined(__AVXVNNI__) || \
    (defined(ANSOR_RT_AMX_TILE) && !defined(ANSOR_AMX_EMULATION))
#include <immintrin.h>
#endif
#if defined(ANSOR_AMX_EMULATION)
#include <ansor_amx_emulation.h>
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

// The process's permission to use AMX tile data, which Linux (5.16 and later) grants on request
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); without it the first tile instruction
// faults. Asked of the kernel once per process, by whichever thread asks first; the answer is
// kept. Quiet, since the library dispatcher asks it to choose a variant. False on other systems
// and architectures.
bool request_amx_permission();
// Why the permission was refused, as a line for stderr ("ansor: this kernel uses AMX tiles, but
// Linux refused them (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): Invalid argument); ..."); empty
// when it was granted. The same string, at the same address, for the life of the process.
const char* amx_permission_error();
// Prints `message` and a newline to stderr the first time it is called in the process, and
// nothing after: a refusal is reported once, however many kernel calls and threads meet it.
void report_amx_refusal(const char* message);

#if defined(ANSOR_RT_AMX_TILE)
namespace detail {

// LDTILECFG's 64-byte block for the wrappers: palette 1, every tile 64 bytes per row; the
// accumulators (tmm0-tmm3) and A tiles (tmm4, tmm5) `rows` rows, the B tiles (tmm6, tmm7) 16 rows
// (a K step of 16 dwords).
struct alignas(64) AmxTileConfig {
  uint8_t bytes[64];
};

constexpr AmxTileConfig amx_tile_config(int rows) {
  AmxTileConfig config{};
  config.bytes[0] = 1;
  for (int t = 0; t < 8; ++t) {
    config.bytes[16 + 2 * t] = 64;
    config.bytes[48 + t] = static_cast<uint8_t>(t < 6 ? rows : 16);
  }
  return config;
}

// The rows of A and C tiles in the thread's loaded configuration (0: none loaded by the wrappers).
inline thread_local int amx_configured_rows = 0;

// Loads the configuration of `Rows`-row A and C tiles. LDTILECFG zeroes the tiles, which the
// wrappers load afresh in every call.
template <int Rows>
inline void amx_configure() {
  static constexpr AmxTileConfig config = amx_tile_config(Rows);
  _tile_loadconfig(config.bytes);
  amx_configured_rows = Rows;
}

// How many amx_begin of the thread are open: a parallel task that the calling thread runs inside
// a kernel body that began AMX begins and ends again, and must leave the body's tiles configured.
inline thread_local int amx_open_scopes = 0;

}  // namespace detail

// Called by generated code once per thread per kernel call, before any amx_dot_* (at the start
// of each parallel task's body, and of a kernel body that uses AMX outside parallel loops): gets
// the process's permission to use the tiles (asked once per process), then loads the wrappers'
// tile configuration. False, having reported the refusal (once per process), when the
// permission is refused: the kernel then returns a non-zero status without computing. Scopes
// nest: inside an open one, it only counts.
inline bool amx_begin() {
  if (detail::amx_open_scopes > 0) {
    ++detail::amx_open_scopes;
    return true;
  }
#if defined(ANSOR_AMX_EMULATION)
  // The emulation stands in for the OS, so that a test can make it refuse.
  const char* refusal = ansor_amx_emulation::permission_refusal();
#else
  const char* refusal = request_amx_permission() ? nullptr : amx_permission_error();
#endif
  if (refusal) {
    report_amx_refusal(refusal);
    return false;
  }
  detail::amx_configure<16>();
  detail::amx_open_scopes = 1;
  return true;
}

// Called at the end of the scopes amx_begin starts; the last to close runs TILERELEASE, which
// returns the thread's AMX state to INIT, so that the OS no longer saves and restores 8 KiB of
// tiles the thread does not use.
inline void amx_end() {
  if (--detail::amx_open_scopes == 0) {
    _tile_release();
    detail::amx_configured_rows = 0;
  }
}

namespace detail {

// The tile products of one K step for each instruction: C tile (m, n), tmm(2m + n), += A tile m,
// tmm(4 + m), times B tile n, tmm(6 + n). The tile numbers are literals because GCC's intrinsics
// paste them into assembly text: not even a template parameter would do.
#define ANSOR_RT_AMX_PRODUCTS(instruction)     \
  instruction(0, 4, 6);                        \
  if constexpr (NT == 2) instruction(1, 4, 7); \
  if constexpr (MT == 2) instruction(2, 5, 6); \
  if constexpr (MT == 2 && NT == 2) instruction(3, 5, 7)

#if defined(ANSOR_RT_AMX_BF16)
struct Tdpbf16ps {
  template <int MT, int NT>
  static void products() { ANSOR_RT_AMX_PRODUCTS(_tile_dpbf16ps); }
};
#endif
#if defined(ANSOR_RT_AMX_INT8)
struct Tdpbusd {
  template <int MT, int NT>
  static void products() { ANSOR_RT_AMX_PRODUCTS(_tile_dpbusd); }
};
struct Tdpbssd {
  template <int MT, int NT>
  static void products() { ANSOR_RT_AMX_PRODUCTS(_tile_dpbssd); }
};
struct Tdpbsud {
  template <int MT, int NT>
  static void products() { ANSOR_RT_AMX_PRODUCTS(_tile_dpbsud); }
};
struct Tdpbuud {
  template <int MT, int NT>
  static void products() { ANSOR_RT_AMX_PRODUCTS(_tile_dpbuud); }
};
#endif
#undef ANSOR_RT_AMX_PRODUCTS

// The wrappers' common body, in bytes (every element type fills a tile row with 64 bytes, and a
// row of B with a dword per column): the C tiles loaded once, the A and B tiles of each K step,
// their products, the C tiles stored once. A and C tiles of other than 16 rows need their own
// configuration, loaded when the thread's (amx_begin's, or another wrapper's) differs: a kernel
// whose calls all have the same rows loads it once per task. Outside amx_begin and amx_end
// nothing is configured, and the first tile load faults as it would without the wrappers.
template <class Instruction, int MT, int NT, int R>
inline void amx_dot(const void* a, int64_t lda_bytes, const void* b, void* c, int64_t ldc, int64_t kb) {
  static_assert((MT == 1 || MT == 2) && (NT == 1 || NT == 2), "1 or 2 tiles of rows and of columns: 8 tiles in all");
  static_assert(R >= 1 && R <= 16, "a tile holds 1 to 16 rows");
  if (amx_configured_rows != 0 && amx_configured_rows != R) amx_configure<R>();
  // GCC's tile loads are asm statements that do not say they read memory: this barrier makes the
  // caller's stores to A, B and C land before them, and keeps those stores from looking dead.
  __asm__ __volatile__("" ::: "memory");
  const auto* a_bytes = static_cast<const char*>(a);
  const auto* b_bytes = static_cast<const char*>(b);
  auto* c_top = static_cast<char*>(c);
  const int64_t c_stride = ldc * 4;
  char* c_bottom = c_top + R * c_stride;
  _tile_loadd(0, c_top, c_stride);
  if constexpr (NT == 2) _tile_loadd(1, c_top + 64, c_stride);
  if constexpr (MT == 2) _tile_loadd(2, c_bottom, c_stride);
  if constexpr (MT == 2 && NT == 2) _tile_loadd(3, c_bottom + 64, c_stride);
  for (int64_t step = 0; step < kb; ++step) {
    // A K step is 64 bytes of each row of A, and 16 rows of 64 * NT bytes of packed B.
    const char* a_step = a_bytes + 64 * step;
    const char* b_step = b_bytes + 1024 * NT * step;
    _tile_loadd(4, a_step, lda_bytes);
    if constexpr (MT == 2) _tile_loadd(5, a_step + R * lda_bytes, lda_bytes);
    _tile_loadd(6, b_step, 64 * NT);
    if constexpr (NT == 2) _tile_loadd(7, b_step + 64, 64 * NT);
    Instruction::template products<MT, NT>();
  }
  _tile_stored(0, c_top, c_stride);
  if constexpr (NT == 2) _tile_stored(1, c_top + 64, c_stride);
  if constexpr (MT == 2) _tile_stored(2, c_bottom, c_stride);
  if constexpr (MT == 2 && NT == 2) _tile_stored(3, c_bottom + 64, c_stride);
}

}  // namespace detail
#endif

// The AMX wrappers, between amx_begin and amx_end (which load the configuration of 16-row tiles;
// a wrapper of R rows loads its own where the thread's differs). Each computes
//   C[R*MT rows][16*NT cols] += A[R*MT][K] * B[K][16*NT],  K = 32*kb (bf16) or 64*kb (8-bit),
// MT, NT in {1, 2} (up to 4 accumulator tiles, 2 A and 2 B tiles), R rows per A and C tile
// (1 to 16: a convolution's row of 56 pixels is 4 tiles of 14):
// - a: A's first element, rows lda elements apart, each row's K elements consecutive;
// - b: B packed as [kb][16][16*NT][Q] (Q = 2 for bf16, 4 for 8-bit): element (k, n) of K step s
//   (k < 16*Q within the step) is at b[s*(16*16*NT*Q) + (k/Q)*(16*NT*Q) + n*Q + k%Q], the
//   K-interleaved pairs or quads AMX's B tiles take, the NT tiles of a step side by side in each
//   64*NT-byte row;
// - c: C's first element, rows ldc elements apart.
// Sums of bf16 products are f32 (the instruction's order and rounding); 8-bit ones are i32 sums
// that wrap, never saturate.
#if defined(ANSOR_RT_AMX_BF16)
// TDPBF16PS.
template <int MT, int NT, int R = 16>
inline void amx_dot_bf16_f32(const uint16_t* a, int64_t lda, const uint16_t* b, float* c, int64_t ldc, int64_t kb) {
  detail::amx_dot<detail::Tdpbf16ps, MT, NT, R>(a, lda * 2, b, c, ldc, kb);
}
#endif
#if defined(ANSOR_RT_AMX_INT8)
// TDPBUSD: A u8, B s8.
template <int MT, int NT, int R = 16>
inline void amx_dot_u8s8_i32(const uint8_t* a, int64_t lda, const int8_t* b, int32_t* c, int64_t ldc, int64_t kb) {
  detail::amx_dot<detail::Tdpbusd, MT, NT, R>(a, lda, b, c, ldc, kb);
}
// TDPBSSD: A s8, B s8.
template <int MT, int NT, int R = 16>
inline void amx_dot_s8s8_i32(const int8_t* a, int64_t lda, const int8_t* b, int32_t* c, int64_t ldc, int64_t kb) {
  detail::amx_dot<detail::Tdpbssd, MT, NT, R>(a, lda, b, c, ldc, kb);
}
// TDPBSUD: A s8, B u8.
template <int MT, int NT, int R = 16>
inline void amx_dot_s8u8_i32(const int8_t* a, int64_t lda, const uint8_t* b, int32_t* c, int64_t ldc, int64_t kb) {
  detail::amx_dot<detail::Tdpbsud, MT, NT, R>(a, lda, b, c, ldc, kb);
}
// TDPBUUD: A u8, B u8.
template <int MT, int NT, int R = 16>
inline void amx_dot_u8u8_i32(const uint8_t* a, int64_t lda, const uint8_t* b, int32_t* c, int64_t ldc, int64_t kb) {
  detail::amx_dot<detail::Tdpbuud, MT, NT, R>(a, lda, b, c, ldc, kb);
}
#endif

}  // namespace ansor_rt

#endif
