// An emulation of Intel AMX (AMX-TILE, AMX-BF16, AMX-INT8) for tests on machines without it: the
// tile intrinsics of <immintrin.h>, with their names and argument orders, run in C++ on a
// thread's own tile configuration and eight 1 KiB tile registers, as the Intel SDM's pseudo-code
// describes the instructions. Code written against the intrinsics (runtime/include/ansor/
// tensor_intrinsics.h's AMX wrappers, kernels that call them) compiles unchanged with
// -DANSOR_AMX_EMULATION and this folder on the include path.
//
// Every use is checked where the hardware would fault (#UD, or #GP for LDTILECFG): a tile
// instruction without a configuration (before _tile_loadconfig, after _tile_release), a tile
// number beyond tmm7, a tile the configuration left empty or gave bytes per row that are not a
// multiple of 4, a start_row beyond a loaded or stored tile, a dot product whose shapes disagree
// or whose operands are not three different tiles, a configuration the CPU would refuse. Where
// the hardware faults, the emulation prints the instruction, the tiles and their shapes, and
// aborts, so that a wrong caller fails loudly in a test instead of computing garbage.
//
// Modelled as on Sapphire Rapids: palette 1 only (8 tiles of at most 16 rows of 64 bytes). Not
// modelled: the XFD/permission mechanism beyond a test's switch (refuse_permission), the T1 hint
// of _tile_stream_loadd, faults on memory and the restart of interrupted instructions (start_row
// is honoured and cleared as the pseudo-code says, but nothing interrupts an instruction).
#ifndef ANSOR_AMX_EMULATION_H
#define ANSOR_AMX_EMULATION_H

#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// The compilers' <immintrin.h> define the AMX intrinsics on every x86-64 build (as macros and
// as inline functions with a target attribute). It is included first, so that the names below
// replace its definitions and no later inclusion brings them back.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ansor_amx_emulation {

// Palette 1, the only one: tmm0-tmm7, each at most 16 rows of 64 bytes.
constexpr int kTiles = 8;
constexpr int kMaxRows = 16;
constexpr int kBytesPerRow = 64;

// A thread's AMX state: TILECFG (as LDTILECFG reads it from its 64-byte block: byte 0 the
// palette, byte 1 start_row, bytes 16-47 each tile's bytes per row as a little-endian 16-bit
// value, bytes 48-63 each tile's rows) and TILEDATA.
struct State {
  bool configured = false;  // the SDM's TILES_CONFIGURED
  uint8_t palette = 0;
  uint8_t start_row = 0;
  uint16_t colsb[kTiles] = {};
  uint8_t rows[kTiles] = {};
  uint8_t data[kTiles][kMaxRows][kBytesPerRow] = {};
};

// Each thread has its own tiles, as each hardware thread does.
inline State& state() {
  static thread_local State s;
  return s;
}

// Whether the calling thread has a tile configuration loaded (for tests of code that must leave
// the tiles released).
inline bool tiles_configured() { return state().configured; }

namespace detail {

[[noreturn]] inline void fault(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

inline void fault(const char* format, ...) {
  std::fprintf(stderr, "AMX emulation: ");
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

// The INIT state of TILECFG and TILEDATA: no configuration, zero tiles (TILERELEASE, palette 0).
inline void init_state(State& s) { s = State(); }

inline void require_configured(const char* instruction) {
  if (!state().configured)
    fault("%s: #UD: no tile configuration is loaded (none was, or _tile_release dropped it)", instruction);
}

// A tile operand that the instruction may use: a register of the palette, with rows and bytes
// per row (a multiple of 4: the instructions move and compute dwords) in the configuration.
inline void require_tile(const char* instruction, const char* operand, int tile) {
  if (tile < 0 || tile >= kTiles) fault("%s: #UD: %s is tmm%d, beyond tmm%d", instruction, operand, tile, kTiles - 1);
  const State& s = state();
  if (s.rows[tile] == 0)
    fault("%s: #UD: %s is tmm%d, which the loaded configuration leaves empty (0 rows x 0 bytes)", instruction, operand, tile);
  if (s.colsb[tile] % 4 != 0)
    fault("%s: #UD: %s is tmm%d, configured with %d bytes per row, not a multiple of 4", instruction, operand, tile, s.colsb[tile]);
}

// A tile load or store starts at start_row, which must lie in the tile.
inline void require_start_row(const char* instruction, int tile) {
  const State& s = state();
  if (s.start_row >= s.rows[tile])
    fault("%s: #UD: start_row %d is not a row of tmm%d (%d rows)", instruction, s.start_row, tile, s.rows[tile]);
}

inline void zero_rows_from(int tile, int first_row) {
  State& s = state();
  for (int r = first_row; r < kMaxRows; ++r) std::memset(s.data[tile][r], 0, kBytesPerRow);
}

inline uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void write_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

inline float f32_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t bits_of_f32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Denormals in, as DAZ reads them: zeros of their sign.
inline float daz(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

// Denormals out, as FTZ writes them: a result that rounding left subnormal becomes a zero of its
// sign. (x86 calls a result tiny when its rounding to 24 bits with an unbounded exponent is below
// the smallest normal. The two differ for exact results more than 2^-151 and at most 2^-150
// below the smallest normal: the CPU flushes them, the emulation rounds them up to it.)
inline float ftz(float x) { return daz(x); }

// The operands of a dot product: three different tiles, configured, whose shapes make a matrix
// product (dst M x N dwords, a M x K dwords, b K x N dwords).
inline void require_product(const char* instruction, int dst, int a, int b) {
  require_configured(instruction);
  require_tile(instruction, "dst", dst);
  require_tile(instruction, "a", a);
  require_tile(instruction, "b", b);
  const State& s = state();
  auto shapes = [&](const char* what) {
    fault("%s(%d, %d, %d): #UD: %s (dst tmm%d: %d rows x %d bytes, a tmm%d: %d rows x %d bytes, b tmm%d: %d rows x %d bytes)",
          instruction, dst, a, b, what, dst, s.rows[dst], s.colsb[dst], a, s.rows[a], s.colsb[a], b, s.rows[b], s.colsb[b]);
  };
  if (dst == a || dst == b || a == b) shapes("the three operands must be different tiles");
  if (s.rows[dst] != s.rows[a]) shapes("rows(dst) != rows(a)");
  if (s.colsb[a] / 4 != s.rows[b]) shapes("colsb(a) / 4 != rows(b)");
  if (s.colsb[dst] != s.colsb[b]) shapes("colsb(dst) != colsb(b)");
}

// TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD: for m < rows(dst), k < colsb(a) / 4, n < colsb(dst) / 4,
// dst.dword[m][n] += the four products of a's bytes of dword k in row m with b's bytes of dword n
// in row k, each byte signed or unsigned as the instruction says, summed in 32 bits that wrap (no
// saturation). The rest of dst is zeroed.
template <bool ASigned, bool BSigned>
void dot_bytes(const char* instruction, int dst, int a, int b) {
  require_product(instruction, dst, a, b);
  State& s = state();
  auto value = [](uint8_t byte, bool is_signed) { return is_signed ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte); };
  const int rows = s.rows[dst], depth = s.colsb[a] / 4, cols = s.colsb[dst] / 4;
  for (int m = 0; m < rows; ++m) {
    uint8_t row[kBytesPerRow] = {};
    std::memcpy(row, s.data[dst][m], s.colsb[dst]);
    for (int k = 0; k < depth; ++k)
      for (int n = 0; n < cols; ++n) {
        int32_t products = 0;  // at most 4 * 255 * 255 in magnitude
        for (int q = 0; q < 4; ++q) products += value(s.data[a][m][4 * k + q], ASigned) * value(s.data[b][k][4 * n + q], BSigned);
        write_u32(row + 4 * n, read_u32(row + 4 * n) + static_cast<uint32_t>(products));
      }
    std::memcpy(s.data[dst][m], row, kBytesPerRow);
  }
  zero_rows_from(dst, rows);
  s.start_row = 0;
}

// TDPBF16PS, as the SDM's pseudo-code has it: for each row m, the even and the odd bf16 of the
// pairs are accumulated apart over k, each product added by a fused multiply-add to its f32 sum
// (which starts at zero); then dst[m][n] += (even sum + odd sum). Every operation reads
// denormals as zeros (DAZ), flushes denormal results to zero (FTZ) and rounds to nearest even,
// whatever MXCSR says (the emulation sets the rounding mode for the instruction's duration and
// applies DAZ and FTZ itself; an MXCSR with DAZ or FTZ set changes nothing, since the instruction
// has both). NaNs propagate as the host's arithmetic propagates them (which NaN of two comes out
// is not modelled); no exception flag is meant to be observed.
inline void dot_bf16(const char* instruction, int dst, int a, int b) {
  require_product(instruction, dst, a, b);
  State& s = state();
  const int saved_rounding = std::fegetround();
  std::fesetround(FE_TONEAREST);
  auto bf16 = [](const uint8_t* p) { return daz(f32_of_bits(static_cast<uint32_t>(p[0] | p[1] << 8) << 16)); };
  const int rows = s.rows[dst], depth = s.colsb[a] / 4, cols = s.colsb[dst] / 4;
  for (int m = 0; m < rows; ++m) {
    float sums[2 * kBytesPerRow / 4] = {};
    for (int k = 0; k < depth; ++k)
      for (int n = 0; n < cols; ++n)
        for (int half = 0; half < 2; ++half) {
          const float x = bf16(&s.data[a][m][4 * k + 2 * half]), y = bf16(&s.data[b][k][4 * n + 2 * half]);
          sums[2 * n + half] = ftz(std::fma(x, y, sums[2 * n + half]));
        }
    uint8_t row[kBytesPerRow] = {};
    std::memcpy(row, s.data[dst][m], s.colsb[dst]);
    for (int n = 0; n < cols; ++n) {
      const float pair = ftz(sums[2 * n] + sums[2 * n + 1]);
      write_u32(row + 4 * n, bits_of_f32(ftz(daz(f32_of_bits(read_u32(row + 4 * n))) + pair)));
    }
    std::memcpy(s.data[dst][m], row, kBytesPerRow);
  }
  zero_rows_from(dst, rows);
  s.start_row = 0;
  std::fesetround(saved_rounding);
}

}  // namespace detail

// LDTILECFG: checks the 64-byte block as the CPU does (#GP on a palette other than 0 or 1,
// reserved bytes not zero, more than 16 rows or 64 bytes per row, a tile with rows but no bytes
// or the reverse), then takes it and zeroes every tile. Palette 0 is the INIT state (as
// TILERELEASE leaves it).
inline void ldtilecfg(const void* config) {
  uint8_t block[64];
  std::memcpy(block, config, sizeof block);
  const int palette = block[0];
  if (palette > 1) detail::fault("_tile_loadconfig: #GP: palette %d (only 0 and 1 exist)", palette);
  State& s = state();
  if (palette == 0) {
    detail::init_state(s);
    return;
  }
  for (int i = 2; i < 64; ++i) {
    const bool reserved = i < 16 || (i >= 16 + 2 * kTiles && i < 48) || i >= 48 + kTiles;
    if (reserved && block[i] != 0) detail::fault("_tile_loadconfig: #GP: reserved byte %d is %d, not 0", i, block[i]);
  }
  State next;
  next.configured = true;
  next.palette = block[0];
  next.start_row = block[1];
  for (int t = 0; t < kTiles; ++t) {
    next.colsb[t] = static_cast<uint16_t>(block[16 + 2 * t] | block[17 + 2 * t] << 8);
    next.rows[t] = block[48 + t];
    if (next.colsb[t] > kBytesPerRow)
      detail::fault("_tile_loadconfig: #GP: tmm%d has %d bytes per row, beyond %d", t, next.colsb[t], kBytesPerRow);
    if (next.rows[t] > kMaxRows) detail::fault("_tile_loadconfig: #GP: tmm%d has %d rows, beyond %d", t, next.rows[t], kMaxRows);
    if ((next.rows[t] == 0) != (next.colsb[t] == 0))
      detail::fault("_tile_loadconfig: #GP: tmm%d has %d rows of %d bytes (either both are 0 or neither)", t, next.rows[t], next.colsb[t]);
  }
  s = next;
}

// STTILECFG: the configuration as LDTILECFG reads it; 64 zero bytes when none is loaded.
inline void sttilecfg(void* config) {
  const State& s = state();
  uint8_t block[64] = {};
  if (s.configured) {
    block[0] = s.palette;
    block[1] = s.start_row;
    for (int t = 0; t < kTiles; ++t) {
      block[16 + 2 * t] = static_cast<uint8_t>(s.colsb[t] & 0xff);
      block[17 + 2 * t] = static_cast<uint8_t>(s.colsb[t] >> 8);
      block[48 + t] = s.rows[t];
    }
  }
  std::memcpy(config, block, sizeof block);
}

// TILELOADD (and TILELOADDT1): rows start_row to rows-1 of the tile from base + row * stride,
// colsb bytes each; the rest of those rows and the rows past the tile's are zeroed.
inline void tileloadd(const char* instruction, int dst, const void* base, int64_t stride) {
  detail::require_configured(instruction);
  detail::require_tile(instruction, "dst", dst);
  detail::require_start_row(instruction, dst);
  State& s = state();
  detail::zero_rows_from(dst, s.start_row);
  const auto* bytes = static_cast<const uint8_t*>(base);
  for (int r = s.start_row; r < s.rows[dst]; ++r) std::memcpy(s.data[dst][r], bytes + r * stride, s.colsb[dst]);
  s.start_row = 0;
}

// TILESTORED: rows start_row to rows-1 of the tile to base + row * stride, colsb bytes each.
inline void tilestored(int src, void* base, int64_t stride) {
  detail::require_configured("_tile_stored");
  detail::require_tile("_tile_stored", "src", src);
  detail::require_start_row("_tile_stored", src);
  State& s = state();
  auto* bytes = static_cast<uint8_t*>(base);
  for (int r = s.start_row; r < s.rows[src]; ++r) std::memcpy(bytes + r * stride, s.data[src][r], s.colsb[src]);
  s.start_row = 0;
}

// TILEZERO: the whole tile register.
inline void tilezero(int tile) {
  detail::require_configured("_tile_zero");
  detail::require_tile("_tile_zero", "dst", tile);
  detail::zero_rows_from(tile, 0);
}

// TILERELEASE: back to the INIT state (no configuration, zero tiles).
inline void tilerelease() { detail::init_state(state()); }

// The dot products, by instruction: A's bytes signed (s) or unsigned (u), then B's. (Functions of
// their own, so that the intrinsics' expansions hold no comma outside parentheses, which would
// split the arguments of a macro they are passed to, as EXPECT_DEATH's statement.)
inline void tdpbssd(int dst, int a, int b) { detail::dot_bytes<true, true>("_tile_dpbssd", dst, a, b); }
inline void tdpbsud(int dst, int a, int b) { detail::dot_bytes<true, false>("_tile_dpbsud", dst, a, b); }
inline void tdpbusd(int dst, int a, int b) { detail::dot_bytes<false, true>("_tile_dpbusd", dst, a, b); }
inline void tdpbuud(int dst, int a, int b) { detail::dot_bytes<false, false>("_tile_dpbuud", dst, a, b); }
inline void tdpbf16ps(int dst, int a, int b) { detail::dot_bf16("_tile_dpbf16ps", dst, a, b); }

// The process's permission to use AMX tile data, which Linux grants on request
// (arch_prctl(ARCH_REQ_XCOMP_PERM)): granted here, unless a test refuses it to see how code
// without AMX fails. `message` is what the refusal reports (the runtime prints it); nullptr grants
// the permission again.
inline std::atomic<const char*>& refusal_message() {
  static std::atomic<const char*> message{nullptr};
  return message;
}
inline void refuse_permission(const char* message) { refusal_message().store(message); }
// nullptr when the permission is granted, else the refusal's message.
inline const char* permission_refusal() { return refusal_message().load(); }

}  // namespace ansor_amx_emulation

#undef _tile_loadconfig
#undef _tile_storeconfig
#undef _tile_loadd
#undef _tile_stream_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_release
#undef _tile_dpbf16ps
#undef _tile_dpbssd
#undef _tile_dpbsud
#undef _tile_dpbusd
#undef _tile_dpbuud

#define _tile_loadconfig(config) ::ansor_amx_emulation::ldtilecfg(config)
#define _tile_storeconfig(config) ::ansor_amx_emulation::sttilecfg(config)
#define _tile_loadd(dst, base, stride) ::ansor_amx_emulation::tileloadd("_tile_loadd", (dst), (base), (stride))
#define _tile_stream_loadd(dst, base, stride) ::ansor_amx_emulation::tileloadd("_tile_stream_loadd", (dst), (base), (stride))
#define _tile_stored(src, base, stride) ::ansor_amx_emulation::tilestored((src), (base), (stride))
#define _tile_zero(tile) ::ansor_amx_emulation::tilezero(tile)
#define _tile_release() ::ansor_amx_emulation::tilerelease()
#define _tile_dpbf16ps(dst, a, b) ::ansor_amx_emulation::tdpbf16ps((dst), (a), (b))
#define _tile_dpbssd(dst, a, b) ::ansor_amx_emulation::tdpbssd((dst), (a), (b))
#define _tile_dpbsud(dst, a, b) ::ansor_amx_emulation::tdpbsud((dst), (a), (b))
#define _tile_dpbusd(dst, a, b) ::ansor_amx_emulation::tdpbusd((dst), (a), (b))
#define _tile_dpbuud(dst, a, b) ::ansor_amx_emulation::tdpbuud((dst), (a), (b))

#endif
