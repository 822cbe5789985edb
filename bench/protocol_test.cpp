// Tests of the benchmarks' protocol (protocol.h): a regression in how libraries are called or
// counted would change every published ratio, so the rules are checked here, not only read.
#include "protocol.h"

#include <ansor/runtime.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>

#include "bench_support.h"

#if ANSOR_BENCH_ONEDNN
#include "onednn_support.h"
#endif
#if ANSOR_BENCH_OPENMP
#include <omp.h>
#endif
#if ANSOR_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace ansor::bench {
namespace {

TEST(NonNative, ReferenceImplementationsNeverCount) {
  for (PrimitiveKind kind : {PrimitiveKind::Reduction, PrimitiveKind::Convolution, PrimitiveKind::Matmul, PrimitiveKind::Softmax})
    EXPECT_NE(non_native_reason(kind, "ref:any"), "");
  EXPECT_NE(non_native_reason(PrimitiveKind::LayerNorm, "ref_layer_normalization:any"), "");
}

TEST(NonNative, GemmIsAFallbackForConvolutionsOnly) {
  EXPECT_NE(non_native_reason(PrimitiveKind::Convolution, "gemm:jit"), "");
  EXPECT_NE(non_native_reason(PrimitiveKind::Deconvolution, "gemm:jit"), "");
  EXPECT_EQ(non_native_reason(PrimitiveKind::Matmul, "gemm:jit"), "");
  EXPECT_EQ(non_native_reason(PrimitiveKind::InnerProduct, "gemm:jit"), "");
  EXPECT_EQ(non_native_reason(PrimitiveKind::Convolution, "brgconv:avx512_core"), "");
  EXPECT_EQ(non_native_reason(PrimitiveKind::Deconvolution, "jit:avx512_core"), "");
}

TEST(NonNative, ACallWithOneReferencePartDoesNotCount) {
  LibraryCall call;
  call.parts = {{PrimitiveKind::Matmul, "brg:avx512_core"}, {PrimitiveKind::Softmax, "ref:any"}};
  EXPECT_EQ(call.implementation(), "brg:avx512_core + ref:any");
  EXPECT_NE(call.non_native(), "");
  call.parts[1].implementation = "jit:avx512_common";
  EXPECT_EQ(call.non_native(), "");
}

LibraryRow row(const std::string& library, const std::string& implementation, PrimitiveKind kind, double seconds) {
  LibraryRow r;
  r.library = library;
  r.implementation = implementation;
  r.non_native = non_native_reason(kind, implementation);
  r.time = {seconds, seconds, seconds};
  return r;
}

TEST(LibraryRows, AReferenceRowReportsNoTime) {
  LibraryRow ref = row("oneDNN", "ref:any", PrimitiveKind::Reduction, 1.5e-3);
  EXPECT_FALSE(ref.reported_seconds());
  EXPECT_NE(library_cell(ref).find("no native implementation (ref:any)"), std::string::npos);
  EXPECT_EQ(library_cell(ref).find("1.5"), std::string::npos) << "the reference implementation's time must not be printed as the library's";
}

TEST(LibraryRows, TheBestLibraryIsTheFastestNativeOne) {
  std::vector<LibraryRow> rows = {row("oneDNN", "gemm:jit", PrimitiveKind::Convolution, 1e-4),
                                  row("OpenBLAS", "cblas_sgemm (SKYLAKEX kernels)", PrimitiveKind::Blas, 3e-4),
                                  row("oneDNN", "ref:any", PrimitiveKind::Convolution, 5e-5)};
  const LibraryRow* best = best_reported(rows);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->library, "OpenBLAS");
  rows.pop_back();
  rows.erase(rows.begin() + 1);
  EXPECT_EQ(best_reported(rows), nullptr);
}

TEST(Timing, RoundsInterleaveTheCalls) {
  std::vector<int> order;
  std::vector<Spread> s = interleaved({[&] { order.push_back(0); }, [&] { order.push_back(1); }}, 5, 0.0);
  ASSERT_EQ(s.size(), 2u);
  int switches = 0;
  for (size_t i = 1; i < order.size(); ++i) switches += order[i] != order[i - 1];
  EXPECT_EQ(switches, 9) << "five rounds of two calls in turn";
  EXPECT_EQ(order.front(), 0);
  EXPECT_EQ(order.back(), 1);
}

TEST(Timing, TheSpreadHoldsTheMedianRoundAndItsExtremes) {
  int call = 0;
  std::vector<Spread> s = interleaved({[&] {
                                        // Rounds of 6 calls: the third round sleeps 4 ms a call, the others 1 ms.
                                        std::this_thread::sleep_for(std::chrono::milliseconds(call++ / 6 == 2 ? 4 : 1));
                                      }},
                                      5, 0.0);
  EXPECT_GE(s[0].median, 1e-3);
  EXPECT_LT(s[0].median, 3e-3);
  EXPECT_GE(s[0].max, 4e-3);
  EXPECT_LE(s[0].min, s[0].median);
  EXPECT_EQ(format_ms(2.5e-3), "2.50");
  EXPECT_EQ(format_ms(Spread{1.2e-4, 1.1e-4, 1.3e-4}), "0.120 [0.110–0.130]");
}

TEST(Threads, OneNumberForEveryRuntime) {
  set_all_threads(1);
  EXPECT_EQ(ansor_get_num_threads(), 1);
#if ANSOR_BENCH_OPENMP
  EXPECT_EQ(omp_get_max_threads(), 1);
#endif
#if ANSOR_BENCH_OPENBLAS
  EXPECT_EQ(openblas_get_num_threads(), 1);
#endif
  set_all_threads(2);
  EXPECT_EQ(ansor_get_num_threads(), 2);
#if ANSOR_BENCH_OPENMP
  EXPECT_EQ(omp_get_max_threads(), 2);
#endif
  set_all_threads(0);
}

TEST(WaitPolicy, OtherRuntimesSpinAsLongAsOurs) {
  set_all_threads(1);
  WaitPolicy w = matched_wait_policy();
  set_all_threads(0);
  EXPECT_GT(w.ansor_pauses, 0);
  EXPECT_GT(w.spin_seconds, 0);
  // libgomp polls once per pause, as our pool does: at least as many polls, more for the yields.
  EXPECT_GE(w.gomp_spincount, w.ansor_pauses);
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_GE(w.openblas_timeout, 4);
  EXPECT_LE(w.openblas_timeout, 30);
#endif
}

// A library that doubles its input, with a layout of its own: reorders in and out.
LibraryPreparer doubling_library(int* prepared_at_threads, bool wrong) {
  return [=](const std::vector<const void*>& inputs, void* output) {
    const float* in = static_cast<const float*>(inputs[0]);
    float* out = static_cast<float*>(output);
    *prepared_at_threads = ansor_get_num_threads();
    LibraryCall call;
    call.library = "Doubler";
    call.parts = {{PrimitiveKind::Eltwise, "jit:test"}};
    call.layouts = "dst Ab4a";
    auto theirs = std::make_shared<std::vector<float>>(8);
    call.run = [=] {
      for (int i = 0; i < 8; ++i) (*theirs)[i] = 2 * in[i] + (wrong ? 1.0f : 0.0f);
    };
    call.reorders = [=] { std::copy(theirs->begin(), theirs->end(), out); };
    call.run_plain_io = [=] {
      for (int i = 0; i < 8; ++i) (*theirs)[i] = 2 * in[i] + (wrong ? 1.0f : 0.0f);
      std::copy(theirs->begin(), theirs->end(), out);
    };
    call.resources = theirs;
    return call;
  };
}

TEST(Comparison, TimesChecksAndPreparesAtEachThreadCount) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, ours(8);
  auto our_call = [&] {
    for (int i = 0; i < 8; ++i) ours[i] = 2 * x[i];
  };
  our_call();
  auto check = [&](const void* output) {
    const float* theirs = static_cast<const float*>(output);
    OutputCheck c;
    for (int i = 0; i < 8; ++i) c.max_diff = std::max(c.max_diff, static_cast<double>(std::fabs(theirs[i] - ours[i])));
    c.agrees = c.max_diff < 1e-6;
    return c;
  };
  int right_threads = 0, wrong_threads = 0;
  Comparison c = compare_with_libraries(our_call, {{"Doubler", doubling_library(&right_threads, false)}, {"Doubler+1", doubling_library(&wrong_threads, true)}},
                                        {x.data()}, 8 * sizeof(float), check, 2, true);
  ASSERT_EQ(c.libraries.size(), 2u);
  EXPECT_TRUE(c.libraries[0].agrees);
  EXPECT_FALSE(c.libraries[1].agrees);
  EXPECT_DOUBLE_EQ(c.libraries[1].max_diff, 1.0);
  EXPECT_TRUE(c.libraries[0].plain_io);
  EXPECT_TRUE(c.libraries[0].reorders);
  ASSERT_TRUE(c.ours_one_thread);
  EXPECT_TRUE(c.libraries[0].one_thread);
  EXPECT_EQ(right_threads, 1) << "prepared last for the one-thread round";
  EXPECT_EQ(ansor_get_num_threads(), 2) << "the run's thread count is restored";
  EXPECT_EQ(c.libraries[0].layouts, "dst Ab4a");
  EXPECT_TRUE(c.libraries[0].reported_seconds());
  set_all_threads(0);
}

// Integer outputs are compared exactly, also beyond 2^24, where a float would round them together.
TEST(OutputCheck, IntegerOutputsAreExact) {
  const int64_t shape[] = {2};
  const ansor_tensor_info output{"C", ANSOR_DTYPE_I32, 1, shape, 1, 0};
  const int32_t ours[] = {(1 << 24) + 1, -3}, same[] = {(1 << 24) + 1, -3}, one_less[] = {1 << 24, -3};
  const OutputChecker check = output_checker(output, ours, 0.0);
  EXPECT_TRUE(check(same).agrees);
  const OutputCheck c = check(one_less);
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(c.max_diff, 1.0);
}

// bf16 outputs are read as bf16 bit patterns: a library that rounds one element the other way
// (one ulp) is within the tolerance of bf16 workloads, a wrong value is not.
TEST(OutputCheck, Bf16OutputsAreReadAsBf16) {
  const int64_t shape[] = {2};
  const ansor_tensor_info output{"Y", ANSOR_DTYPE_BF16, 1, shape, 1, 0};
  const uint16_t ours[] = {0x3f80, 0x4000}, one_ulp[] = {0x3f81, 0x4000}, wrong[] = {0x3f80, 0x4040};  // 1, 2; 1 + 2^-7; 3
  const OutputChecker check = output_checker(output, ours, 2e-2);
  const OutputCheck near = check(one_ulp);
  EXPECT_TRUE(near.agrees);
  EXPECT_DOUBLE_EQ(near.max_diff, 0x1p-7);
  EXPECT_FALSE(check(wrong).agrees);
}

#if ANSOR_BENCH_ONEDNN
// The helpers create oneDNN's primitives with `any` layouts: a depthwise convolution given NCHW
// buffers then runs oneDNN's blocked direct kernel, not its GEMM fallback, and its plain-I/O call
// reorders from and back to our layout with the right result.
TEST(OneDnnHelpers, ConvolutionsChooseTheirOwnLayouts) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  const int64_t c = 16, h = 12, w = 12;
  ConvolutionSpec spec{memory::desc({1, c, h, w}, memory::data_type::f32, Tag::nchw), memory::desc({c, 1, 1, 3, 3}, memory::data_type::f32, Tag::goihw),
                       memory::desc({1, c, h, w}, memory::data_type::f32, Tag::nchw), {1, 1}, {0, 0}, {1, 1}};
  std::vector<float> x(c * h * w), weights(c * 9), y(c * h * w, -7.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) - 5.0f;
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>((i * 13) % 7) - 3.0f;
  set_all_threads(2);
  LibraryCall call = onednn_convolution(spec)({x.data(), weights.data()}, y.data());
  set_all_threads(0);
  EXPECT_EQ(call.non_native(), "") << call.implementation();
  EXPECT_NE(call.layouts.find("src "), std::string::npos) << "oneDNN was given the source in our layout: " << call.implementation();
  ASSERT_TRUE(call.run_plain_io);
  call.row_major_call()();
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        float expected = 0;
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t s = 0; s < 3; ++s) {
            const int64_t ii = i + r - 1, jj = j + s - 1;
            if (ii >= 0 && ii < h && jj >= 0 && jj < w) expected += x[(ch * h + ii) * w + jj] * weights[ch * 9 + r * 3 + s];
          }
        ASSERT_NEAR(y[(ch * h + i) * w + j], expected, 1e-3) << ch << " " << i << " " << j;
      }
}

TEST(OneDnnHelpers, TheNormIsNative) {
  std::vector<float> x(2 * 300), norms(2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f;
  LibraryCall call = onednn_norm2(2, 300)({x.data()}, norms.data());
  EXPECT_EQ(call.non_native(), "") << call.implementation();
  call.row_major_call()();
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 300; ++i) sum += static_cast<double>(x[b * 300 + i]) * x[b * 300 + i];
    EXPECT_NEAR(norms[b], std::sqrt(sum), 1e-3);
  }
}

// The matmul helper in int8 data types reads our u8 and i8 buffers and writes i32, exactly. The
// u8 values have 7 bits: on CPUs without VNNI, oneDNN's int8 gemm adds pairs of products in 16
// bits, which saturate with 8-bit values (its documented behaviour: on a Zen 3, -5658 instead of
// -8448); the helper's wiring is what this checks.
TEST(OneDnnHelpers, Int8MatmulIsExact) {
  using dt = dnnl::memory::data_type;
  const int64_t m = 3, k = 64, n = 40;
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  std::vector<int32_t> c(m * n, -1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>((i * 37) % 128);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(static_cast<int>((i * 13) % 256) - 128);
  set_all_threads(2);
  LibraryCall call = onednn_matmul(1, m, k, n, true, {dt::u8, dt::s8, dt::s32})({a.data(), b.data()}, c.data());
  set_all_threads(0);
  call.row_major_call()();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t expected = 0;
      for (int64_t r = 0; r < k; ++r) expected += a[i * k + r] * b[r * n + j];
      ASSERT_EQ(c[i * n + j], expected) << i << " " << j << " (" << call.implementation() << ")";
    }
}

// The dense helper in bf16: bf16 source and weights, an f32 bias and relu, a bf16 result within
// one rounding of the exact one.
TEST(OneDnnHelpers, Bf16DenseWithBiasAndRelu) {
  using dt = dnnl::memory::data_type;
  const int64_t m = 3, k = 48, n = 40;
  auto bf16 = [](float v) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16); };  // exact for these values
  auto value = [](int64_t i, int mod) { return static_cast<float>(i % mod - mod / 2) * 0.125f; };
  std::vector<uint16_t> x(m * k), w(n * k), y(m * n);
  std::vector<float> bias(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16(value(static_cast<int64_t>(i) * 7, 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = bf16(value(static_cast<int64_t>(i) * 5, 11));
  for (int64_t j = 0; j < n; ++j) bias[j] = value(j, 13);
  set_all_threads(2);
  LibraryCall call;
  try {
    call = onednn_dense(m, k, n, DenseEpilogue::BiasRelu, {dt::bf16, dt::bf16, dt::bf16})({x.data(), w.data(), bias.data()}, y.data());
  } catch (const dnnl::error& e) {
    set_all_threads(0);
    if (e.status == dnnl_unimplemented) GTEST_SKIP() << "oneDNN has no bf16 inner product on this CPU";
    throw;
  }
  set_all_threads(0);
  call.row_major_call()();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias[j];
      for (int64_t r = 0; r < k; ++r) sum += static_cast<double>(value((i * k + r) * 7, 9)) * value((j * k + r) * 5, 11);
      const double expected = std::max(sum, 0.0), got = std::bit_cast<float>(static_cast<uint32_t>(y[i * n + j]) << 16);
      ASSERT_NEAR(got, expected, expected * 0x1p-8) << i << " " << j << " (" << call.implementation() << ")";
    }
}

TEST(OneDnnHelpers, LayoutNames) {
  using dnnl::memory;
  EXPECT_EQ(layout_name(memory::desc({1, 32, 4, 4}, memory::data_type::f32, memory::format_tag::nChw16c)), "aBcd16b");
  EXPECT_EQ(layout_name(memory::desc({1, 32, 4, 4}, memory::data_type::f32, memory::format_tag::nhwc)), "acdb");
}
#endif

}  // namespace
}  // namespace ansor::bench
