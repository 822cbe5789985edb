// The AMX wrappers of tensor_intrinsics.h (amx_begin, amx_dot_*, amx_end) against plain loops
// over the unpacked matrices. One source, two programs: built with ANSOR_AMX_EMULATION it runs on
// the emulated intrinsics of tests/amx_emulation, on any machine; built with -mamx-tile
// -mamx-bf16 -mamx-int8 it runs on the CPU's tiles where the CPU has AMX, the OS saves the tiles
// and Linux grants them to the process, and is skipped elsewhere (where building it checks that
// the wrappers compile for AMX).
#include "ansor/scalar_support.h"
#include "ansor/tensor_intrinsics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "amx_cpu.h"

#if !defined(ANSOR_RT_AMX_BF16) || !defined(ANSOR_RT_AMX_INT8)
#error "the AMX wrapper tests are built with ANSOR_AMX_EMULATION, or with -mamx-tile -mamx-bf16 -mamx-int8"
#endif

namespace {

// Why the wrappers cannot run here, or "" when they can.
std::string why_amx_cannot_run() {
#if defined(ANSOR_AMX_EMULATION)
  return "";
#else
  for (unsigned bit : {ansor_test::kAmxTileBit, ansor_test::kAmxBf16Bit, ansor_test::kAmxInt8Bit})
    if (!ansor_test::cpuid_7_edx(bit)) return "this CPU lacks AMX (CPUID leaf 7, EDX bits 22, 24 and 25)";
  if (!ansor_test::os_saves_amx_state()) return "the OS does not save the tiles (XCR0 bits 17 and 18)";
  if (!ansor_rt::request_amx_permission()) return ansor_rt::amx_permission_error();
  return "";
#endif
}

// Each test runs between amx_begin and amx_end, as a kernel's body does.
class AmxTiles : public testing::Test {
protected:
  void SetUp() override {
    const std::string why = why_amx_cannot_run();
    if (!why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(ansor_rt::amx_begin());
    begun_ = true;
  }
  void TearDown() override {
    if (begun_) ansor_rt::amx_end();
  }
  bool begun_ = false;
};

// The wrappers by their operands' types; kQ elements of K fill a dword.
struct Bf16 {
  using A = uint16_t;
  using B = uint16_t;
  using C = float;
  static constexpr int kQ = 2;
  template <int MT, int NT, int R>
  static void dot(const A* a, int64_t lda, const B* b, C* c, int64_t ldc, int64_t kb) {
    ansor_rt::amx_dot_bf16_f32<MT, NT, R>(a, lda, b, c, ldc, kb);
  }
};

struct U8S8 {
  using A = uint8_t;
  using B = int8_t;
  using C = int32_t;
  static constexpr int kQ = 4;
  template <int MT, int NT, int R>
  static void dot(const A* a, int64_t lda, const B* b, C* c, int64_t ldc, int64_t kb) {
    ansor_rt::amx_dot_u8s8_i32<MT, NT, R>(a, lda, b, c, ldc, kb);
  }
};

struct S8S8 {
  using A = int8_t;
  using B = int8_t;
  using C = int32_t;
  static constexpr int kQ = 4;
  template <int MT, int NT, int R>
  static void dot(const A* a, int64_t lda, const B* b, C* c, int64_t ldc, int64_t kb) {
    ansor_rt::amx_dot_s8s8_i32<MT, NT, R>(a, lda, b, c, ldc, kb);
  }
};

struct S8U8 {
  using A = int8_t;
  using B = uint8_t;
  using C = int32_t;
  static constexpr int kQ = 4;
  template <int MT, int NT, int R>
  static void dot(const A* a, int64_t lda, const B* b, C* c, int64_t ldc, int64_t kb) {
    ansor_rt::amx_dot_s8u8_i32<MT, NT, R>(a, lda, b, c, ldc, kb);
  }
};

struct U8U8 {
  using A = uint8_t;
  using B = uint8_t;
  using C = int32_t;
  static constexpr int kQ = 4;
  template <int MT, int NT, int R>
  static void dot(const A* a, int64_t lda, const B* b, C* c, int64_t ldc, int64_t kb) {
    ansor_rt::amx_dot_u8u8_i32<MT, NT, R>(a, lda, b, c, ldc, kb);
  }
};

// Packs row-major B (depth x cols, cols = 16 * NT) as the wrappers take it, by the documented
// formula: element (k, n) of K step s = k / (16 * q), kk = k % (16 * q), lies at
// s * (16 * cols * q) + (kk / q) * (cols * q) + n * q + kk % q.
template <class T>
std::vector<T> pack_b(const std::vector<T>& b, int64_t depth, int64_t cols, int q) {
  std::vector<T> packed(b.size());
  const int64_t step_depth = 16 * q;
  for (int64_t k = 0; k < depth; ++k)
    for (int64_t n = 0; n < cols; ++n) {
      const int64_t step = k / step_depth, kk = k % step_depth;
      packed[step * (16 * cols * q) + (kk / q) * (cols * q) + n * q + kk % q] = b[k * cols + n];
    }
  return packed;
}

// Where the operands lie inside bigger matrices: A's block at row 2, column 3 of a matrix 11
// columns wider than K; C's block at row 1, column 5 of one 9 columns wider than 16 * NT.
constexpr int64_t kARow = 2, kACol = 3, kAExtraCols = 11, kAExtraRows = 4;
constexpr int64_t kCRow = 1, kCCol = 5, kCExtraCols = 9, kCExtraRows = 3;

// Reports the first few of many failures of a loop, and how many there were.
class FailureCount {
public:
  explicit FailureCount(std::string what) : what_(std::move(what)) {}
  ~FailureCount() { EXPECT_EQ(count_, 0) << what_; }
  FailureCount(const FailureCount&) = delete;
  FailureCount& operator=(const FailureCount&) = delete;
  // Whether to report this failure (the first few are).
  bool report() { return ++count_ <= 3; }

private:
  std::string what_;
  int count_ = 0;
};

// Calls wrapper W<MT, NT, R> on A (R*MT x depth) and B (depth x 16*NT), both row-major, with A
// and C inside bigger matrices and C's block starting as `c`. Returns C's block, having checked
// that nothing around it changed. `a_filler` fills A's matrix around the block, where the wrapper
// must not read.
template <class W, int MT, int NT, int R>
std::vector<typename W::C> run_wrapper(const std::vector<typename W::A>& a, const std::vector<typename W::B>& b,
                                       const std::vector<typename W::C>& c, int64_t kb, typename W::A a_filler) {
  using TA = typename W::A;
  using TC = typename W::C;
  const int64_t rows = R * MT, cols = 16 * NT, depth = 16 * W::kQ * kb;
  const int64_t lda = depth + kAExtraCols, ldc = cols + kCExtraCols;
  std::vector<TA> big_a(static_cast<size_t>((rows + kAExtraRows) * lda), a_filler);
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t k = 0; k < depth; ++k) big_a[(kARow + m) * lda + kACol + k] = a[m * depth + k];
  const std::vector<typename W::B> packed = pack_b(b, depth, cols, W::kQ);
  std::vector<TC> big_c(static_cast<size_t>((rows + kCExtraRows) * ldc));
  for (size_t i = 0; i < big_c.size(); ++i) big_c[i] = static_cast<TC>(-7 - static_cast<int>(i));
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) big_c[(kCRow + m) * ldc + kCCol + n] = c[m * cols + n];
  const std::vector<TC> before = big_c;

  W::template dot<MT, NT, R>(&big_a[kARow * lda + kACol], lda, packed.data(), &big_c[kCRow * ldc + kCCol], ldc, kb);

  std::vector<TC> block(static_cast<size_t>(rows * cols));
  FailureCount outside("elements of C outside its block changed");
  for (int64_t i = 0; i < rows + kCExtraRows; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (i >= kCRow && i < kCRow + rows && j >= kCCol && j < kCCol + cols)
        block[(i - kCRow) * cols + j - kCCol] = big_c[i * ldc + j];
      else if (big_c[i * ldc + j] != before[i * ldc + j] && outside.report())
        ADD_FAILURE() << "C[" << i << "][" << j << "] (outside the block) changed from " << before[i * ldc + j] << " to "
                      << big_c[i * ldc + j];
    }
  return block;
}

// Calls f(std::integral_constant<int, MT>, std::integral_constant<int, NT>,
// std::integral_constant<int, R>, kb) for every MT, NT in {1, 2}, R in {16, 14, 7} rows per tile
// (whole tiles, a convolution's 56 or 28 pixels, 7) and kb in {1, 3}. The rows change from call to
// call, so that each call finds the configuration of another's.
template <class F>
void for_each_shape(F f) {
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using Whole = std::integral_constant<int, 16>;
  using Fourteen = std::integral_constant<int, 14>;
  using Seven = std::integral_constant<int, 7>;
  auto each_rows = [&](auto mt, auto nt, int64_t kb) {
    f(mt, nt, Whole(), kb);
    f(mt, nt, Fourteen(), kb);
    f(mt, nt, Seven(), kb);
  };
  for (int64_t kb : {1, 3}) {
    each_rows(One(), One(), kb);
    each_rows(One(), Two(), kb);
    each_rows(Two(), One(), kb);
    each_rows(Two(), Two(), kb);
  }
}

// The 8-bit wrapper W<MT, NT, R> on A and B against exact i32 sums, from C's block `c`: the sums
// wrap, as the instruction's do.
template <class W, int MT, int NT, int R = 16>
void expect_exact_bytes(const std::vector<typename W::A>& a, const std::vector<typename W::B>& b, const std::vector<int32_t>& c,
                        int64_t kb) {
  const int64_t rows = R * MT, cols = 16 * NT, depth = 16 * W::kQ * kb;
  const std::vector<int32_t> got = run_wrapper<W, MT, NT, R>(a, b, c, kb, static_cast<typename W::A>(0x5a));
  FailureCount wrong("wrong sums");
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) {
      uint32_t sum = static_cast<uint32_t>(c[m * cols + n]);
      for (int64_t k = 0; k < depth; ++k)
        sum += static_cast<uint32_t>(static_cast<int32_t>(a[m * depth + k]) * static_cast<int32_t>(b[k * cols + n]));
      if (got[m * cols + n] != static_cast<int32_t>(sum) && wrong.report())
        ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got[m * cols + n] << ", expected " << static_cast<int32_t>(sum);
    }
}

// Random operands, and accumulators anywhere in i32's range.
template <class W, int MT, int NT, int R>
void expect_exact_random_bytes(int64_t kb, std::mt19937& rng) {
  const int64_t rows = R * MT, cols = 16 * NT, depth = 16 * W::kQ * kb;
  std::vector<typename W::A> a(static_cast<size_t>(rows * depth));
  std::vector<typename W::B> b(static_cast<size_t>(depth * cols));
  std::vector<int32_t> c(static_cast<size_t>(rows * cols));
  for (auto& x : a) x = static_cast<typename W::A>(rng());
  for (auto& x : b) x = static_cast<typename W::B>(rng());
  for (auto& x : c) x = static_cast<int32_t>(rng());
  expect_exact_bytes<W, MT, NT, R>(a, b, c, kb);
}

template <class W>
class AmxByteTiles : public AmxTiles {};

struct ByteWrapperNames {
  template <class W>
  static std::string GetName(int) {
    if (std::is_same_v<W, U8S8>) return "u8s8";
    if (std::is_same_v<W, S8S8>) return "s8s8";
    if (std::is_same_v<W, S8U8>) return "s8u8";
    return "u8u8";
  }
};

using ByteWrappers = testing::Types<U8S8, S8S8, S8U8, U8U8>;
TYPED_TEST_SUITE(AmxByteTiles, ByteWrappers, ByteWrapperNames);

TYPED_TEST(AmxByteTiles, EveryShapeSumsExactly) {
  std::mt19937 rng(11);
  for_each_shape([&](auto mt, auto nt, auto r, int64_t kb) {
    SCOPED_TRACE(testing::Message() << "MT " << mt() << ", NT " << nt() << ", R " << r() << ", kb " << kb);
    expect_exact_random_bytes<TypeParam, decltype(mt)::value, decltype(nt)::value, decltype(r)::value>(kb, rng);
  });
}

// K = 64 * 64 = 4096 products of the operands' extremes (255 x -128 for u8 x s8, -128 x -128,
// -128 x 255, 255 x 255, and the others): their sums need 28 bits or more, far beyond 16, and
// the accumulators start at 0 and near both limits of i32, so that some sums wrap.
TYPED_TEST(AmxByteTiles, ExtremesOverALongKAccumulateInI32) {
  using W = TypeParam;
  using A = typename W::A;
  using B = typename W::B;
  constexpr int64_t kb = 64, rows = 32, cols = 32, depth = 16 * W::kQ * kb;
  std::vector<int32_t> c(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? std::numeric_limits<int32_t>::max() - 5 : std::numeric_limits<int32_t>::min() + 5;
  for (A a_value : {std::numeric_limits<A>::lowest(), std::numeric_limits<A>::max()})
    for (B b_value : {std::numeric_limits<B>::lowest(), std::numeric_limits<B>::max()}) {
      SCOPED_TRACE(testing::Message() << "A all " << int{a_value} << ", B all " << int{b_value});
      expect_exact_bytes<W, 2, 2>(std::vector<A>(rows * depth, a_value), std::vector<B>(depth * cols, b_value), c, kb);
    }
}

// The bf16 wrapper on random operands against a double sum, within what f32 sums of the 32 * kb
// products in any order can err (products of bf16 are exact in f32).
template <int MT, int NT, int R>
void expect_close_bf16(int64_t kb, std::mt19937& rng) {
  const int64_t rows = R * MT, cols = 16 * NT, depth = 32 * kb;
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<uint16_t> a(static_cast<size_t>(rows * depth)), b(static_cast<size_t>(depth * cols));
  std::vector<float> c(static_cast<size_t>(rows * cols));
  for (uint16_t& x : a) x = ansor_rt::f32_to_bf16(value(rng));
  for (uint16_t& x : b) x = ansor_rt::f32_to_bf16(value(rng));
  for (float& x : c) x = 8.0f * value(rng);
  // A NaN around A's block: a read there shows in the sums.
  const std::vector<float> got = run_wrapper<Bf16, MT, NT, R>(a, b, c, kb, 0x7fc0);
  FailureCount wrong("sums beyond f32's rounding");
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) {
      double exact = c[m * cols + n], magnitude = std::fabs(exact);
      for (int64_t k = 0; k < depth; ++k) {
        const double product = static_cast<double>(ansor_rt::bf16_to_f32(a[m * depth + k])) * ansor_rt::bf16_to_f32(b[k * cols + n]);
        exact += product;
        magnitude += std::fabs(product);
      }
      // Each of the at most 32 * kb + 1 additions rounds off at most 2^-24 of the magnitude of
      // what it sums (the emulation, following the SDM, makes 16 * kb + 2 of them on each path).
      const double tolerance = (32.0 * kb + 1) * std::ldexp(magnitude, -24);
      const double error = std::fabs(got[m * cols + n] - exact);
      if (!(error <= tolerance) && wrong.report())
        ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got[m * cols + n] << ", expected " << exact << " within " << tolerance;
    }
}

TEST_F(AmxTiles, Bf16ProductsOfEveryShapeAreWithinF32Rounding) {
  std::mt19937 rng(5);
  for_each_shape([&](auto mt, auto nt, auto r, int64_t kb) {
    SCOPED_TRACE(testing::Message() << "MT " << mt() << ", NT " << nt() << ", R " << r() << ", kb " << kb);
    expect_close_bf16<decltype(mt)::value, decltype(nt)::value, decltype(r)::value>(kb, rng);
  });
}

TEST_F(AmxTiles, BeginLoadsTheWrappersConfigurationAndEndReleasesIt) {
  alignas(64) uint8_t block[64];
  std::memset(block, 0xcc, sizeof block);
  _tile_storeconfig(block);
  // GCC's STTILECFG says it writes 8 bytes: the other 56 are written too.
  __asm__ __volatile__("" ::: "memory");
  for (int i = 0; i < 64; ++i) {
    const int expected = i == 0 ? 1 : i >= 16 && i < 32 && i % 2 == 0 ? 64 : i >= 48 && i < 56 ? 16 : 0;
    EXPECT_EQ(block[i], expected) << "byte " << i;
  }
  ansor_rt::amx_end();
  begun_ = false;
  std::memset(block, 0xcc, sizeof block);
  _tile_storeconfig(block);
  __asm__ __volatile__("" ::: "memory");
  for (int i = 0; i < 64; ++i) EXPECT_EQ(block[i], 0) << "byte " << i << " after amx_end";
}

// A wrapper of other than 16 rows per tile loads its own configuration (A and C tiles of its rows,
// B tiles of 16); a 16-row wrapper after it loads the one amx_begin loaded.
TEST_F(AmxTiles, WrappersOfOtherRowsLoadTheirConfiguration) {
  auto stored_rows = [] {
    alignas(64) uint8_t block[64];
    _tile_storeconfig(block);
    __asm__ __volatile__("" ::: "memory");
    return std::vector<int>(block + 48, block + 56);
  };
  std::vector<uint8_t> a(16 * 64, 1), b(16 * 64, 3);
  std::vector<int32_t> c(16 * 16, 0);
  ansor_rt::amx_dot_u8u8_i32<1, 1, 7>(a.data(), 64, b.data(), c.data(), 16, 1);
  EXPECT_EQ(stored_rows(), (std::vector<int>{7, 7, 7, 7, 7, 7, 16, 16}));
  for (int i = 0; i < 16 * 16; ++i) ASSERT_EQ(c[i], i < 7 * 16 ? 64 * 3 : 0) << "element " << i;
  ansor_rt::amx_dot_u8u8_i32<1, 1>(a.data(), 64, b.data(), c.data(), 16, 1);
  EXPECT_EQ(stored_rows(), std::vector<int>(8, 16));
  for (int i = 0; i < 16 * 16; ++i) ASSERT_EQ(c[i], i < 7 * 16 ? 2 * 64 * 3 : 64 * 3) << "element " << i;
}

// A scope begun inside an open one (a parallel task on the thread of a kernel body that began)
// leaves the tiles configured when it ends; the outermost end releases them.
TEST_F(AmxTiles, NestedScopesKeepTheOuterConfiguration) {
  ASSERT_TRUE(ansor_rt::amx_begin());
  ansor_rt::amx_end();
  std::vector<uint8_t> a(16 * 64, 1), b(16 * 64, 2);
  std::vector<int32_t> c(16 * 16, 0);
  ansor_rt::amx_dot_u8u8_i32<1, 1>(a.data(), 64, b.data(), c.data(), 16, 1);
  for (int32_t x : c) ASSERT_EQ(x, 64 * 2);
  alignas(64) uint8_t block[64];
  std::memset(block, 0xcc, sizeof block);
  _tile_storeconfig(block);
  __asm__ __volatile__("" ::: "memory");
  EXPECT_EQ(block[0], 1) << "the outer scope's configuration";
  ansor_rt::amx_end();
  begun_ = false;
  _tile_storeconfig(block);
  __asm__ __volatile__("" ::: "memory");
  EXPECT_EQ(block[0], 0) << "released by the outermost end";
}

// Each thread has its own tiles: threads that begin, multiply and end at the same time do not
// disturb one another.
TEST_F(AmxTiles, ThreadsEachHaveTheirOwnTiles) {
  constexpr int kThreads = 4, kRounds = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&wrong, t] {
      if (!ansor_rt::amx_begin()) {
        ++wrong;
        return;
      }
      std::vector<uint8_t> a(32 * 64, static_cast<uint8_t>(t + 1)), b(64 * 32);
      std::vector<int32_t> c(32 * 32);
      for (int round = 1; round <= kRounds; ++round) {
        std::fill(b.begin(), b.end(), static_cast<uint8_t>(round));
        std::fill(c.begin(), c.end(), t);
        ansor_rt::amx_dot_u8u8_i32<2, 2>(a.data(), 64, b.data(), c.data(), 32, 1);
        for (int32_t x : c)
          if (x != t + 64 * (t + 1) * round) ++wrong;
      }
      ansor_rt::amx_end();
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

#if !defined(ANSOR_AMX_EMULATION)
// Where the process may not use the tiles, amx_begin says why and fails before any tile
// instruction (on a CPU without AMX, one would fault).
TEST(AmxBegin, FailsWithTheReasonWhereThePermissionIsRefused) {
  if (ansor_rt::request_amx_permission()) GTEST_SKIP() << "this process may use AMX";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(ansor_rt::amx_begin() ? 1 : 0), testing::ExitedWithCode(0),
              "^ansor: this kernel uses AMX tiles, but .*; rebuild or choose a variant without AMX\n$");
}
#endif

}  // namespace
