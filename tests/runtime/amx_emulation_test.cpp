// The AMX emulation of tests/amx_emulation, which the wrapper tests run on where the CPU lacks
// AMX: its instructions as the SDM describes them (what loads and stores move and zero, the
// signedness of each byte product, TDPBF16PS's DAZ, FTZ and order of sums), the faults it turns
// into aborts that name the instruction and the shapes, and a refused permission as amx_begin
// meets it.
#include "ansor/tensor_intrinsics.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if !defined(ANSOR_AMX_EMULATION)
#error "the emulation's tests are built with ANSOR_AMX_EMULATION"
#endif

namespace {

namespace emu = ansor_amx_emulation;

// An LDTILECFG block of palette 1 giving tmm0-tmm7 these rows and bytes per row.
struct Config {
  alignas(64) uint8_t bytes[64] = {};
  Config(const int (&rows)[8], const int (&colsb)[8]) {
    bytes[0] = 1;
    for (int t = 0; t < 8; ++t) {
      bytes[16 + 2 * t] = static_cast<uint8_t>(colsb[t] & 0xff);
      bytes[17 + 2 * t] = static_cast<uint8_t>(colsb[t] >> 8);
      bytes[48 + t] = static_cast<uint8_t>(rows[t]);
    }
  }
};

// Every test starts and ends with the thread's tiles released.
class AmxEmulation : public testing::Test {
protected:
  void SetUp() override { _tile_release(); }
  void TearDown() override { _tile_release(); }
};

TEST_F(AmxEmulation, LoadsZeroWhatLiesBeyondTheConfiguredRowsAndBytes) {
  const Config config({3, 16, 16, 16, 16, 16, 16, 16}, {8, 64, 64, 64, 64, 64, 64, 64});
  _tile_loadconfig(config.bytes);
  std::memset(emu::state().data[0], 0xee, sizeof emu::state().data[0]);
  uint8_t memory[3 * 20];
  for (int i = 0; i < 60; ++i) memory[i] = static_cast<uint8_t>(i + 1);
  _tile_loadd(0, memory, 20);
  for (int r = 0; r < 16; ++r)
    for (int byte = 0; byte < 64; ++byte)
      EXPECT_EQ(emu::state().data[0][r][byte], r < 3 && byte < 8 ? r * 20 + byte + 1 : 0) << "row " << r << ", byte " << byte;
}

TEST_F(AmxEmulation, StoresWriteOnlyTheConfiguredRowsAndBytes) {
  const Config config({3, 16, 16, 16, 16, 16, 16, 16}, {8, 64, 64, 64, 64, 64, 64, 64});
  _tile_loadconfig(config.bytes);
  for (int r = 0; r < 16; ++r)
    for (int byte = 0; byte < 64; ++byte) emu::state().data[0][r][byte] = static_cast<uint8_t>(100 + r);
  uint8_t memory[5 * 20];
  std::memset(memory, 0x11, sizeof memory);
  _tile_stored(0, memory, 20);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(memory[i], i < 60 && i % 20 < 8 ? 100 + i / 20 : 0x11) << "byte " << i;
}

TEST_F(AmxEmulation, ByteProductsFollowEachInstructionsSignedness) {
  // One dword each: C (1 x 4 bytes) += A (1 x 4 bytes) x B (1 x 4 bytes).
  const Config config({1, 1, 1, 0, 0, 0, 0, 0}, {4, 4, 4, 0, 0, 0, 0, 0});
  const uint8_t a[4] = {255, 1, 128, 0}, b[4] = {2, 255, 128, 3};
  auto product = [&](void (*instruction)()) {
    _tile_loadconfig(config.bytes);
    _tile_loadd(1, a, 4);
    _tile_loadd(2, b, 4);
    instruction();
    int32_t c = 0;
    _tile_stored(0, &c, 4);
    return c;
  };
  // As bytes A is (255, 1, 128, 0) or (-1, 1, -128, 0), B (2, 255, 128, 3) or (2, -1, -128, 3).
  EXPECT_EQ(product([] { _tile_dpbusd(0, 1, 2); }), 255 * 2 + 1 * -1 + 128 * -128);
  EXPECT_EQ(product([] { _tile_dpbssd(0, 1, 2); }), -1 * 2 + 1 * -1 + -128 * -128);
  EXPECT_EQ(product([] { _tile_dpbsud(0, 1, 2); }), -1 * 2 + 1 * 255 + -128 * 128);
  EXPECT_EQ(product([] { _tile_dpbuud(0, 1, 2); }), 255 * 2 + 1 * 255 + 128 * 128);
}

// C (1 x 1 f32) += A (1 x kb pairs) x B (kb x 1 pair) by TDPBF16PS; returns C's bits.
uint32_t bf16_product(const uint16_t* a, const uint16_t* b, int kb, uint32_t c_bits) {
  const Config config({1, 1, kb, 0, 0, 0, 0, 0}, {4, 4 * kb, 4, 0, 0, 0, 0, 0});
  _tile_loadconfig(config.bytes);
  _tile_loadd(0, &c_bits, 4);
  _tile_loadd(1, a, 4 * kb);
  _tile_loadd(2, b, 4);
  _tile_dpbf16ps(0, 1, 2);
  _tile_stored(0, &c_bits, 4);
  return c_bits;
}

TEST_F(AmxEmulation, Bf16ProductsReadDenormalsAsZerosAndFlushDenormalResults) {
  // 2^-127 (a bf16 denormal) x 2^100 would be 2^-27; read as zero it adds nothing.
  const uint16_t denormal_a[2] = {0x0040, 0}, large_b[2] = {0x7180, 0};
  EXPECT_EQ(bf16_product(denormal_a, large_b, 1, 0), 0u);
  // 2^-100 x 2^-30 = 2^-130, a denormal result: flushed to zero.
  const uint16_t tiny_a[2] = {0x0d80, 0}, tiny_b[2] = {0x3080, 0};
  EXPECT_EQ(bf16_product(tiny_a, tiny_b, 1, 0), 0u);
  // A denormal accumulator (2^-127) reads as zero too: adding 2^-63 x 2^-63 = 2^-126 gives
  // 2^-126, not 1.5 x 2^-126.
  const uint16_t two_to_minus_63[2] = {0x2000, 0};
  EXPECT_EQ(bf16_product(two_to_minus_63, two_to_minus_63, 1, 0x00400000u), 0x00800000u);
  // And products of normal values are kept: 1.5 x -2 = -3.
  const uint16_t one_and_a_half[2] = {0x3fc0, 0}, minus_two[2] = {0xc000, 0};
  EXPECT_EQ(bf16_product(one_and_a_half, minus_two, 1, 0), 0xc0400000u);
}

TEST_F(AmxEmulation, Bf16SumsFollowThePseudoCodesOrder) {
  // A pair: (2^24 x 1) + (1 x 1) is summed before C = -2^24 is added; 2^24 + 1 rounds to 2^24
  // (to even), so C becomes 0, where adding each product to C in turn would give 1.
  const uint16_t a[2] = {0x4b80, 0x3f80}, ones[2] = {0x3f80, 0x3f80};
  EXPECT_EQ(bf16_product(a, ones, 1, 0xcb800000u), 0u);
  // Over K: the even products 2^24, then 1, accumulate apart from C: 0 again.
  const uint16_t a_two_steps[4] = {0x4b80, 0, 0x3f80, 0}, b_two_steps[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80};
  EXPECT_EQ(bf16_product(a_two_steps, b_two_steps, 2, 0xcb800000u), 0u);
}

TEST_F(AmxEmulation, ReleaseAndPaletteZeroReturnToTheInitState) {
  const Config config({16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64});
  _tile_loadconfig(config.bytes);
  EXPECT_TRUE(emu::tiles_configured());
  _tile_release();
  EXPECT_FALSE(emu::tiles_configured());
  _tile_loadconfig(config.bytes);
  const uint8_t init[64] = {};
  _tile_loadconfig(init);
  EXPECT_FALSE(emu::tiles_configured());
}

TEST_F(AmxEmulation, AmxEndLeavesTheTilesReleased) {
  ASSERT_TRUE(ansor_rt::amx_begin());
  EXPECT_TRUE(emu::tiles_configured());
  ansor_rt::amx_end();
  EXPECT_FALSE(emu::tiles_configured());
}

// A wrapper call of the smallest shape on zeros.
void call_a_wrapper() {
  static uint8_t a[16 * 64], b[16 * 64];
  static int32_t c[16 * 16];
  ansor_rt::amx_dot_u8s8_i32<1, 1>(a, 64, reinterpret_cast<const int8_t*>(b), c, 16, 1);
}

class AmxEmulationDeathTest : public AmxEmulation {
protected:
  void SetUp() override {
    AmxEmulation::SetUp();
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(AmxEmulationDeathTest, TilesWithoutAConfigurationAbort) {
  EXPECT_DEATH(call_a_wrapper(), "_tile_loadd: #UD: no tile configuration is loaded");
  EXPECT_DEATH(
      {
        if (!ansor_rt::amx_begin()) std::exit(3);
        ansor_rt::amx_end();
        call_a_wrapper();
      },
      "_tile_loadd: #UD: no tile configuration is loaded");
  EXPECT_DEATH(_tile_dpbusd(0, 4, 6), "_tile_dpbusd: #UD: no tile configuration is loaded");
  EXPECT_DEATH(_tile_zero(0), "_tile_zero: #UD: no tile configuration is loaded");
}

TEST_F(AmxEmulationDeathTest, ProductsOfMismatchedShapesAbortNamingThem) {
  // tmm4 has 8 rows where tmm0 has 16.
  const Config fewer_rows({16, 16, 16, 16, 8, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64});
  EXPECT_DEATH(
      {
        _tile_loadconfig(fewer_rows.bytes);
        _tile_dpbusd(0, 4, 6);
      },
      "_tile_dpbusd\\(0, 4, 6\\): #UD: rows\\(dst\\) != rows\\(a\\) \\(dst tmm0: 16 rows x 64 bytes, a tmm4: 8 rows x 64 bytes, "
      "b tmm6: 16 rows x 64 bytes\\)");
  // tmm4's 32 bytes per row are 8 dwords of K, where tmm6 has 16 rows.
  const Config shorter_k({16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 32, 64, 64, 64});
  EXPECT_DEATH(
      {
        _tile_loadconfig(shorter_k.bytes);
        _tile_dpbf16ps(0, 4, 6);
      },
      "_tile_dpbf16ps\\(0, 4, 6\\): #UD: colsb\\(a\\) / 4 != rows\\(b\\)");
  // tmm1 has 32 bytes per row, tmm7 64.
  const Config narrower_c({16, 16, 16, 16, 16, 16, 16, 16}, {64, 32, 64, 64, 64, 64, 64, 64});
  EXPECT_DEATH(
      {
        _tile_loadconfig(narrower_c.bytes);
        _tile_dpbssd(1, 4, 7);
      },
      "_tile_dpbssd\\(1, 4, 7\\): #UD: colsb\\(dst\\) != colsb\\(b\\) \\(dst tmm1: 16 rows x 32 bytes");
  const Config full({16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64});
  EXPECT_DEATH(
      {
        _tile_loadconfig(full.bytes);
        _tile_dpbuud(0, 4, 4);
      },
      "_tile_dpbuud\\(0, 4, 4\\): #UD: the three operands must be different tiles");
}

TEST_F(AmxEmulationDeathTest, TilesTheConfigurationLacksAbort) {
  const Config six_tiles({16, 16, 16, 16, 16, 16, 0, 0}, {64, 64, 64, 64, 64, 64, 0, 0});
  EXPECT_DEATH(
      {
        _tile_loadconfig(six_tiles.bytes);
        _tile_dpbsud(0, 4, 7);
      },
      "_tile_dpbsud: #UD: b is tmm7, which the loaded configuration leaves empty");
  static uint8_t memory[16 * 64];
  EXPECT_DEATH(
      {
        _tile_loadconfig(six_tiles.bytes);
        _tile_loadd(8, memory, 64);
      },
      "_tile_loadd: #UD: dst is tmm8, beyond tmm7");
  const Config odd_bytes({16, 16, 16, 16, 16, 16, 16, 16}, {6, 64, 64, 64, 64, 64, 64, 64});
  EXPECT_DEATH(
      {
        _tile_loadconfig(odd_bytes.bytes);
        _tile_stored(0, memory, 64);
      },
      "_tile_stored: #UD: src is tmm0, configured with 6 bytes per row, not a multiple of 4");
}

TEST_F(AmxEmulationDeathTest, ConfigurationsTheCpuRefusesAbort) {
  Config reserved({16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64});
  reserved.bytes[40] = 1;
  EXPECT_DEATH(_tile_loadconfig(reserved.bytes), "_tile_loadconfig: #GP: reserved byte 40 is 1");
  Config palette = reserved;
  palette.bytes[40] = 0;
  palette.bytes[0] = 2;
  EXPECT_DEATH(_tile_loadconfig(palette.bytes), "_tile_loadconfig: #GP: palette 2");
  const Config too_many_rows({17, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64});
  EXPECT_DEATH(_tile_loadconfig(too_many_rows.bytes), "_tile_loadconfig: #GP: tmm0 has 17 rows, beyond 16");
  const Config rows_without_bytes({16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 0, 64, 64, 64, 64, 64});
  EXPECT_DEATH(_tile_loadconfig(rows_without_bytes.bytes), "_tile_loadconfig: #GP: tmm2 has 16 rows of 0 bytes");
}

TEST_F(AmxEmulationDeathTest, ARefusedPermissionMakesAmxBeginReportOnceAndFail) {
  // Reported once however often amx_begin meets the refusal; no tile is configured.
  EXPECT_EXIT(
      {
        emu::refuse_permission("ansor: this kernel uses AMX tiles, but the emulation refused them");
        const bool first = ansor_rt::amx_begin();
        const bool second = ansor_rt::amx_begin();
        std::exit(!first && !second && !emu::tiles_configured() ? 0 : 1);
      },
      testing::ExitedWithCode(0), "^ansor: this kernel uses AMX tiles, but the emulation refused them\n$");
}

}  // namespace
