// The cost model's features against values derived by hand for small programs: a copy, a tiled
// matmul with parallel, unrolled and vectorized loops, a padded convolution (workspace and
// local padding), GPU bindings and annotation positions; then the table and determinism.
#include "features/features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "schedule/random_schedule.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kKernels = R"(
kernel copy {
  X = input f32[16, 64]
  Y[i:16, j:64] = X[i, j]
}
kernel mm {
  A = input f32[32, 16]
  B = const f32[16, 32]
  C[i:32, j:32] = sum(k:16, A[i, k] * B[k, j])
}
kernel scale {
  X = input f32[4, 53]
  Y[i:4, j:53] = X[i, j] * 2.0
}
kernel conv {
  X = input f32[1, 2, 4, 4]
  W = const f32[3, 2, 3, 3]
  Y = conv2d_nchw(X, W, pad = 1)
}
)";

const FeatureOptions kRaw{64, false};

int index_of(std::string_view name) {
  for (int i = 0; i < kNumFeatures; ++i)
    if (feature_name(i) == name) return i;
  ADD_FAILURE() << "no feature named " << name;
  return 0;
}

// Feature `name` of a row.
double f(const StoreFeatures& row, std::string_view name) { return row.values[index_of(name)]; }

class FeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override { program_ = test::parse(kKernels, "features_test.def"); }

  State initial(const std::string& kernel) const { return State(test::dag_of(program_, kernel)); }

  // The rows of a state, raw; the program goes into failure messages.
  std::vector<StoreFeatures> rows_of(const State& s) {
    LoweredKernel k = lower_for_features(s);
    program_text_ = to_string(k);
    return extract_features(k, kRaw);
  }

  Program program_;
  std::string program_text_;
};

TEST_F(FeaturesTest, CopyHasNoArithmeticAndStreamsBothBuffers) {
  std::vector<StoreFeatures> rows = rows_of(initial("copy"));
  ASSERT_EQ(rows.size(), 1u) << program_text_;
  const StoreFeatures& r = rows[0];
  EXPECT_EQ(r.buffer, "Y");
  // for i < 16, j < 64: Y[i, j] = X[i, j]. No operation at all, indices included.
  for (int i = index_of("float_mad"); i <= index_of("select_op"); ++i) EXPECT_EQ(r.values[i], 0.0f) << feature_name(i);
  for (const char* kind : {"vec", "unroll", "parallel"}) {
    EXPECT_EQ(f(r, std::string(kind) + "_num"), 0);
    EXPECT_EQ(f(r, std::string(kind) + "_prod"), 0);
    EXPECT_EQ(f(r, std::string(kind) + "_len"), 0);
    EXPECT_EQ(f(r, std::string(kind) + "_type.none"), 1);
    EXPECT_EQ(f(r, std::string(kind) + "_type.mixed"), 0);
  }
  // A CPU program: one block of one thread.
  EXPECT_EQ(f(r, "is_gpu"), 0);
  for (const char* len : {"blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len", "threadIdx_x_len", "threadIdx_y_len", "threadIdx_z_len", "vthread_len"})
    EXPECT_EQ(f(r, len), 1) << len;
  // Y (written) then X (read): equal lines and bytes keep the order of access.
  // bytes = 1024 iterations x 4; unique = 16 x 64 x 4; lines = 1024 x min(1, 1 x 4 / 64) = 64;
  // the whole buffer is one run: unique lines = 4096 / 64 = 64. No loop reuses anything:
  // ratios divide by 0.5.
  for (const char* slot : {"B0.", "B1."}) {
    std::string b = slot;
    EXPECT_EQ(f(r, b + "acc_type.write"), b == "B0." ? 1 : 0);
    EXPECT_EQ(f(r, b + "acc_type.read"), b == "B1." ? 1 : 0);
    EXPECT_EQ(f(r, b + "acc_type.read_write"), 0);
    EXPECT_EQ(f(r, b + "bytes"), 4096);
    EXPECT_EQ(f(r, b + "unique_bytes"), 4096);
    EXPECT_EQ(f(r, b + "lines"), 64);
    EXPECT_EQ(f(r, b + "unique_lines"), 64);
    EXPECT_EQ(f(r, b + "reuse_type.no_reuse"), 1);
    EXPECT_EQ(f(r, b + "reuse_type.loop_multiple_read"), 0);
    EXPECT_EQ(f(r, b + "reuse_dis_iter"), 0);
    EXPECT_EQ(f(r, b + "reuse_dis_bytes"), 0);
    EXPECT_EQ(f(r, b + "reuse_ct"), 0);
    EXPECT_EQ(f(r, b + "bytes_d_reuse_ct"), 8192);
    EXPECT_EQ(f(r, b + "unique_bytes_d_reuse_ct"), 8192);
    EXPECT_EQ(f(r, b + "lines_d_reuse_ct"), 128);
    EXPECT_EQ(f(r, b + "unique_lines_d_reuse_ct"), 128);
    EXPECT_EQ(f(r, b + "stride"), 1);
  }
  for (int i = index_of("B2.acc_type.read"); i <= index_of("B4.stride"); ++i) EXPECT_EQ(r.values[i], 0.0f) << feature_name(i);
  // No FLOPs: no curve. Y is a kernel argument: no allocation.
  for (int k = 0; k < kArithIntensitySamples; ++k) EXPECT_EQ(f(r, "arith_intensity_curve_" + std::to_string(k)), 0);
  for (const char* a : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod"}) EXPECT_EQ(f(r, a), 0) << a;
  EXPECT_EQ(f(r, "outer_prod"), 1024);
  EXPECT_EQ(f(r, "num_loops"), 2);
  EXPECT_EQ(f(r, "auto_unroll_max_step"), 0);
}

TEST_F(FeaturesTest, RowsAreScaledByLog2OnePlusXButOneHotsStay) {
  State s = initial("copy");
  std::vector<StoreFeatures> raw = extract_features(s, kRaw), scaled = extract_features(s);
  ASSERT_EQ(scaled.size(), 1u);
  for (int i = 0; i < kNumFeatures; ++i) {
    float expected = feature_is_log_scaled(i) ? static_cast<float>(std::log2(1.0 + raw[0].values[i])) : raw[0].values[i];
    EXPECT_FLOAT_EQ(scaled[0].values[i], expected) << feature_name(i);
  }
  EXPECT_FLOAT_EQ(f(scaled[0], "outer_prod"), static_cast<float>(std::log2(1025.0)));
  EXPECT_EQ(f(scaled[0], "B0.acc_type.write"), 1);
  EXPECT_FALSE(feature_is_log_scaled(index_of("vec_type.inner_spatial")));
  EXPECT_FALSE(feature_is_log_scaled(index_of("is_gpu")));
}

// C = A x B tiled 8 x 8: for i.0 < 4 (parallel), j.0 < 4, k < 16, i.1 < 8 (unrolled),
// j.1 < 8 (vectorized), the initialisation above k, auto_unroll_max_step 16.
State tiled_matmul(const State& initial) {
  constexpr int kC = 2;
  State s = initial;
  s.apply(std::make_shared<SplitStep>(kC, 0, std::vector<int64_t>{8}));  // i.0 i.1 j k
  s.apply(std::make_shared<SplitStep>(kC, 2, std::vector<int64_t>{8}));  // i.0 i.1 j.0 j.1 k
  s.apply(std::make_shared<ReorderStep>(kC, std::vector<int>{0, 2, 4, 1, 3}));
  s.apply(std::make_shared<AnnotateStep>(kC, 0, IterAnnotation::Parallel));
  s.apply(std::make_shared<AnnotateStep>(kC, 3, IterAnnotation::Unroll));
  s.apply(std::make_shared<AnnotateStep>(kC, 4, IterAnnotation::Vectorize));
  s.apply(std::make_shared<PragmaStep>(kC, 0, PragmaKind::AutoUnrollMaxStep, 16));
  return s;
}

TEST_F(FeaturesTest, TiledMatmulUpdate) {
  std::vector<StoreFeatures> rows = rows_of(tiled_matmul(initial("mm")));
  ASSERT_EQ(rows.size(), 2u) << program_text_;
  const StoreFeatures& r = rows[1];  // C[i.0*8 + i.1, j.0*8 + j.1] = C[..] + A[i.0*8 + i.1, k] * B[k, j.0*8 + j.1]
  EXPECT_EQ(r.buffer, "C");
  // 4 x 4 x 16 x 8 x 8 = 16384 iterations, each one float multiply-add and 6 integer ones (the
  // indices i.0*8 + i.1 and j.0*8 + j.1 of the store and the load of C, one in A's, one in B's).
  EXPECT_EQ(f(r, "outer_prod"), 16384);
  EXPECT_EQ(f(r, "num_loops"), 5);
  EXPECT_EQ(f(r, "auto_unroll_max_step"), 16);
  EXPECT_EQ(f(r, "float_mad"), 16384);
  EXPECT_EQ(f(r, "float_addsub"), 0);
  EXPECT_EQ(f(r, "float_mul"), 0);
  EXPECT_EQ(f(r, "int_mad"), 6 * 16384);
  EXPECT_EQ(f(r, "int_addsub"), 0);
  // j.1 indexes the last dimension of C; i.0 and i.1 the first.
  EXPECT_EQ(f(r, "vec_num"), 1);
  EXPECT_EQ(f(r, "vec_prod"), 8);
  EXPECT_EQ(f(r, "vec_len"), 8);
  EXPECT_EQ(f(r, "vec_type.inner_spatial"), 1);
  EXPECT_EQ(f(r, "unroll_num"), 1);
  EXPECT_EQ(f(r, "unroll_len"), 8);
  EXPECT_EQ(f(r, "unroll_type.outer_spatial"), 1);
  EXPECT_EQ(f(r, "parallel_num"), 1);
  EXPECT_EQ(f(r, "parallel_prod"), 4);
  EXPECT_EQ(f(r, "parallel_len"), 4);
  EXPECT_EQ(f(r, "parallel_type.outer_spatial"), 1);
  EXPECT_EQ(f(r, "parallel_type.none"), 0);

  // Slots by lines: A (2048), then C and B (1024 lines, 65536 bytes each) in access order.
  // A: j.1 does not move it, i.1 does by 16 elements = one line: 16384 / 8 lines. The region
  // is all of A (512 floats, one run): 2048 / 64 = 32 unique lines. j.1 reuses it 8 times, one
  // statement (12 bytes) apart. Its innermost loop does not move it: stride 0.
  EXPECT_EQ(f(r, "B0.acc_type.read"), 1);
  EXPECT_EQ(f(r, "B0.bytes"), 65536);
  EXPECT_EQ(f(r, "B0.unique_bytes"), 2048);
  EXPECT_EQ(f(r, "B0.lines"), 2048);
  EXPECT_EQ(f(r, "B0.unique_lines"), 32);
  EXPECT_EQ(f(r, "B0.reuse_type.loop_multiple_read"), 1);
  EXPECT_EQ(f(r, "B0.reuse_dis_iter"), 1);
  EXPECT_EQ(f(r, "B0.reuse_dis_bytes"), 12);
  EXPECT_EQ(f(r, "B0.reuse_ct"), 8);
  EXPECT_EQ(f(r, "B0.bytes_d_reuse_ct"), 8192);
  EXPECT_EQ(f(r, "B0.unique_bytes_d_reuse_ct"), 256);
  EXPECT_EQ(f(r, "B0.lines_d_reuse_ct"), 256);
  EXPECT_EQ(f(r, "B0.unique_lines_d_reuse_ct"), 4);
  EXPECT_EQ(f(r, "B0.stride"), 0);
  // C: read and written, stride 1 in j.1: 16384 / 16 lines; all of C (4096 bytes, 64 lines).
  // k does not move it: reused 16 times, 8 x 8 iterations apart, one iteration of k touching
  // 64 + 8 + 8 floats = 320 bytes.
  EXPECT_EQ(f(r, "B1.acc_type.read_write"), 1);
  EXPECT_EQ(f(r, "B1.bytes"), 65536);
  EXPECT_EQ(f(r, "B1.unique_bytes"), 4096);
  EXPECT_EQ(f(r, "B1.lines"), 1024);
  EXPECT_EQ(f(r, "B1.unique_lines"), 64);
  EXPECT_EQ(f(r, "B1.reuse_type.loop_multiple_read"), 1);
  EXPECT_EQ(f(r, "B1.reuse_dis_iter"), 64);
  EXPECT_EQ(f(r, "B1.reuse_dis_bytes"), 320);
  EXPECT_EQ(f(r, "B1.reuse_ct"), 16);
  EXPECT_EQ(f(r, "B1.lines_d_reuse_ct"), 64);
  EXPECT_EQ(f(r, "B1.stride"), 1);
  // B: i.1 does not move it: reused 8 times, 8 iterations apart, one iteration of i.1 touching
  // 8 + 1 + 8 floats = 68 bytes.
  EXPECT_EQ(f(r, "B2.acc_type.read"), 1);
  EXPECT_EQ(f(r, "B2.lines"), 1024);
  EXPECT_EQ(f(r, "B2.unique_bytes"), 2048);
  EXPECT_EQ(f(r, "B2.unique_lines"), 32);
  EXPECT_EQ(f(r, "B2.reuse_dis_iter"), 8);
  EXPECT_EQ(f(r, "B2.reuse_dis_bytes"), 68);
  EXPECT_EQ(f(r, "B2.reuse_ct"), 8);
  EXPECT_EQ(f(r, "B2.stride"), 1);
  EXPECT_EQ(f(r, "B3.bytes"), 0);

  // FLOPs / bytes from the innermost loop out: (16, 68 B), (128, 320 B), (2048, 1280 B),
  // (8192, 3584 B), (32768, 8192 B); sampled at 3276.8 k, interpolated between the points.
  auto between = [](double x, double x0, double y0, double x1, double y1) { return y0 + (y1 - y0) * (x - x0) / (x1 - x0); };
  EXPECT_FLOAT_EQ(f(r, "arith_intensity_curve_0"), between(3276.8, 2048, 1.6, 8192, 8192.0 / 3584));
  EXPECT_FLOAT_EQ(f(r, "arith_intensity_curve_1"), between(6553.6, 2048, 1.6, 8192, 8192.0 / 3584));
  EXPECT_FLOAT_EQ(f(r, "arith_intensity_curve_2"), between(9830.4, 8192, 8192.0 / 3584, 32768, 4));
  EXPECT_FLOAT_EQ(f(r, "arith_intensity_curve_9"), 4);
  EXPECT_EQ(f(r, "alloc_size"), 0);  // C is a kernel argument
}

TEST_F(FeaturesTest, TiledMatmulInitialisation) {
  std::vector<StoreFeatures> rows = rows_of(tiled_matmul(initial("mm")));
  ASSERT_EQ(rows.size(), 2u) << program_text_;
  const StoreFeatures& r = rows[0];  // C[i.0*8 + i.1, j.0*8 + j.1] = 0 inside j.0, before k
  EXPECT_EQ(r.buffer, "C");
  EXPECT_EQ(f(r, "outer_prod"), 1024);
  EXPECT_EQ(f(r, "num_loops"), 4);
  EXPECT_EQ(f(r, "float_mad"), 0);
  EXPECT_EQ(f(r, "int_mad"), 2 * 1024);
  // The initialisation keeps the vector and unrolled loops.
  EXPECT_EQ(f(r, "vec_len"), 8);
  EXPECT_EQ(f(r, "unroll_len"), 8);
  EXPECT_EQ(f(r, "parallel_len"), 4);
  // C is written only; both statements access it within one iteration of j.0: serial reuse,
  // 8 x 8 iterations apart, one iteration of j.0 touching 64 floats here and 320 in the update.
  EXPECT_EQ(f(r, "B0.acc_type.write"), 1);
  EXPECT_EQ(f(r, "B0.bytes"), 4096);
  EXPECT_EQ(f(r, "B0.lines"), 64);
  EXPECT_EQ(f(r, "B0.reuse_type.serial_multiple_read_write"), 1);
  EXPECT_EQ(f(r, "B0.reuse_dis_iter"), 64);
  EXPECT_EQ(f(r, "B0.reuse_dis_bytes"), 256 + 1280);
  EXPECT_EQ(f(r, "B0.reuse_ct"), 1);
  EXPECT_EQ(f(r, "B1.bytes"), 0);
  EXPECT_EQ(f(r, "arith_intensity_curve_9"), 0);
}

TEST_F(FeaturesTest, UnrolledLoopsStayLoopsForTheFeatures) {
  // auto_unroll_max_step 16 unrolls k (16 statements): lowering writes it out, the features
  // keep the loop and count it as an unrolled reduction loop.
  State s = initial("mm");
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 16));
  EXPECT_EQ(lower_state(s, "k").auto_unroll_max_step("C"), 16);
  int written_out = 0;
  for_each_stmt(lower_state(s, "k").body, [&](const Stmt& x) { written_out += x->kind == StmtKind::Store; });
  EXPECT_EQ(written_out, 1 + 16);
  std::vector<StoreFeatures> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 2u) << program_text_;
  EXPECT_EQ(f(rows[1], "unroll_num"), 1);
  EXPECT_EQ(f(rows[1], "unroll_len"), 16);
  EXPECT_EQ(f(rows[1], "unroll_type.inner_reduce"), 1);
  EXPECT_EQ(f(rows[1], "auto_unroll_max_step"), 16);
  EXPECT_EQ(f(rows[0], "unroll_num"), 0);
}

// The memory pragmas are the two features after the paper's: the prefetch distance (when an
// input is large enough to be prefetched) and whether the stores stream; 0 without them.
TEST_F(FeaturesTest, MemoryPragmasAreFeatures) {
  State plain = initial("copy");
  State hinted = plain;
  hinted.apply(std::make_shared<PragmaStep>(1, 0, PragmaKind::PrefetchBytes, 2048));
  hinted.apply(std::make_shared<PragmaStep>(1, 0, PragmaKind::StreamStores, 1));
  std::vector<StoreFeatures> without = rows_of(plain), with = rows_of(hinted);
  ASSERT_EQ(without.size(), 1u);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(f(without[0], "prefetch_bytes"), 0);
  EXPECT_EQ(f(without[0], "stream_stores"), 0);
  EXPECT_EQ(f(with[0], "prefetch_bytes"), 2048);
  EXPECT_EQ(f(with[0], "stream_stores"), 1);
  for (int i = 0; i < kNumFeatures; ++i) {
    if (i == index_of("prefetch_bytes") || i == index_of("stream_stores")) continue;
    EXPECT_EQ(with[0].values[i], without[0].values[i]) << feature_name(i);
  }
}

// Rows of 53 split by 16: as a vector loop, three whole vectors a row and a last one of 5 lanes
// masked on 8 (3 lanes wasted a row, no guard left); as a plain loop, every iteration of the
// ragged tile tests its guard.
TEST_F(FeaturesTest, RaggedTilesCountWastedLanesAndGuardedIterations) {
  State split = initial("scale");
  split.apply(std::make_shared<SplitStep>(1, 1, std::vector<int64_t>{16}));
  State vectorized = split;
  vectorized.apply(std::make_shared<AnnotateStep>(1, 2, IterAnnotation::Vectorize));
  std::vector<StoreFeatures> plain = rows_of(initial("scale")), guarded = rows_of(split), masked = rows_of(vectorized);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(f(plain[0], "wasted_lanes"), 0);
  EXPECT_EQ(f(plain[0], "guarded_iters"), 0);
  ASSERT_EQ(guarded.size(), 1u) << program_text_;
  EXPECT_EQ(f(guarded[0], "wasted_lanes"), 0);
  EXPECT_EQ(f(guarded[0], "guarded_iters"), 4 * 4 * 16);
  ASSERT_EQ(masked.size(), 2u) << program_text_;
  EXPECT_EQ(f(masked[0], "wasted_lanes"), 0) << program_text_;
  EXPECT_EQ(f(masked[1], "wasted_lanes"), 4 * 3) << program_text_;
  EXPECT_EQ(f(masked[0], "guarded_iters") + f(masked[1], "guarded_iters"), 0) << program_text_;
}

// A mask whose count depends on an outer loop wastes lanes in the iterations where it is short.
TEST(FeaturesMaskTest, MasksCountedAtRunTimeWasteTheLanesTheyLeave) {
  LoweredKernel k;
  k.buffers = {test::buffer("A", {64}), test::buffer("B", {64})};
  k.params = {0, 1};
  Var o = make_var("o"), v = make_var("v");
  Expr i = add(mul(o, int_imm(16)), v);
  Stmt copy = make_store("B", {i}, load("A", DType::F32, {i}));
  Expr count = min_of(sub(int_imm(53), mul(o, int_imm(16))), int_imm(16));
  k.body = make_for(o, 4, ForKind::Serial, std::make_shared<ForNode>(v, 16, ForKind::Vectorized, IterAnnotation::None, copy, count));
  std::vector<StoreFeatures> rows = extract_features(k, kRaw);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(f(rows[0], "wasted_lanes"), 16 - 5);
  EXPECT_EQ(f(rows[0], "guarded_iters"), 0);
}

TEST_F(FeaturesTest, PackedInputsAreReadInTheirLayoutAndPackersHaveNoRows) {
  // C[i, j] += A[i, k] * B[k, j] for i, j < 32, k < 16. Plain B: k steps 32 floats (128 bytes,
  // a line each): 16384 lines, the most, slot 0. Packed in the order j, k: k steps 1 float,
  // 16384 / 16 = 1024 lines, tied with A (before it in access order): slot 1.
  State plain = initial("mm"), packed = plain;
  packed.apply(std::make_shared<LayoutRewriteStep>(1));
  std::vector<StoreFeatures> rows = rows_of(plain);
  ASSERT_EQ(rows.size(), 2u) << program_text_;
  EXPECT_EQ(f(rows[1], "B0.lines"), 16384);
  EXPECT_EQ(f(rows[1], "B0.stride"), 32);
  ASSERT_EQ(lower_for_features(packed).packers.size(), 1u);
  rows = rows_of(packed);
  ASSERT_EQ(rows.size(), 2u) << program_text_;
  EXPECT_EQ(f(rows[1], "B0.lines"), 1024);
  EXPECT_EQ(f(rows[1], "B1.lines"), 1024);
  EXPECT_EQ(f(rows[1], "B1.stride"), 1);
  EXPECT_EQ(f(rows[1], "B1.unique_bytes"), 2048);
}

TEST_F(FeaturesTest, PaddingIntoAWorkspace) {
  std::vector<StoreFeatures> rows = rows_of(initial("conv"));
  ASSERT_EQ(rows.size(), 3u) << program_text_;
  // Y.pad[0, c, h, w] = select(h >= 1 && h < 5 && w >= 1 && w < 5, X[0, c, h - 1, w - 1], 0)
  // for c < 2, h < 6, w < 6: per iteration 1 select, 3 &&, 4 integer comparisons, 2 integer
  // subtractions.
  const StoreFeatures& pad = rows[0];
  EXPECT_EQ(pad.buffer, "Y.pad");
  EXPECT_EQ(f(pad, "outer_prod"), 72);
  EXPECT_EQ(f(pad, "select_op"), 72);
  EXPECT_EQ(f(pad, "bool_op"), 3 * 72);
  EXPECT_EQ(f(pad, "int_cmp"), 4 * 72);
  EXPECT_EQ(f(pad, "int_addsub"), 2 * 72);
  EXPECT_EQ(f(pad, "float_addsub"), 0);
  // Y.pad: 288 bytes, 72 x 4 / 64 = 4.5 lines, one run of 288 bytes: 4.5 unique lines. X: the
  // window clipped to X is all of X, 32 floats, one run: 2 unique lines.
  EXPECT_EQ(f(pad, "B0.acc_type.write"), 1);
  EXPECT_EQ(f(pad, "B0.lines"), 4.5);
  EXPECT_EQ(f(pad, "B0.unique_lines"), 4.5);
  EXPECT_EQ(f(pad, "B0.lines_d_reuse_ct"), 9);
  EXPECT_EQ(f(pad, "B1.acc_type.read"), 1);
  EXPECT_EQ(f(pad, "B1.bytes"), 288);
  EXPECT_EQ(f(pad, "B1.unique_bytes"), 128);
  EXPECT_EQ(f(pad, "B1.lines"), 4.5);
  EXPECT_EQ(f(pad, "B1.unique_lines"), 2);
  EXPECT_EQ(f(pad, "B1.reuse_type.no_reuse"), 1);
  // A workspace: allocated once per call.
  EXPECT_EQ(f(pad, "alloc_size"), 288);
  EXPECT_EQ(f(pad, "alloc_prod"), 72);
  EXPECT_EQ(f(pad, "alloc_outer_prod"), 1);
  EXPECT_EQ(f(pad, "alloc_inner_prod"), 72);
  EXPECT_EQ(f(pad, "arith_intensity_curve_9"), 0);
}

TEST_F(FeaturesTest, ConvolutionReusesEachBufferAcrossTheLoopThatDoesNotMoveIt) {
  std::vector<StoreFeatures> rows = rows_of(initial("conv"));
  ASSERT_EQ(rows.size(), 3u) << program_text_;
  // Y[0, k, h, w] += Y.pad[0, rc, h + ry, w + rx] * W[k, rc, ry, rx] for k < 3, h < 4, w < 4,
  // rc < 2, ry < 3, rx < 3: 864 iterations, a multiply-add and 2 integer additions each.
  const StoreFeatures& r = rows[2];
  EXPECT_EQ(f(r, "outer_prod"), 864);
  EXPECT_EQ(f(r, "float_mad"), 864);
  EXPECT_EQ(f(r, "int_addsub"), 2 * 864);
  // Y.pad and W: stride 1 in rx, 864 / 16 = 54 lines each (Y.pad first, in access order);
  // Y: rc, ry, rx do not move it, w does: 864 / 18 / 16 = 3 lines.
  EXPECT_EQ(f(r, "B0.lines"), 54);
  EXPECT_EQ(f(r, "B1.lines"), 54);
  EXPECT_EQ(f(r, "B2.lines"), 3);
  EXPECT_EQ(f(r, "B2.stride"), 0);
  // Y.pad: every loop but k moves it; reused 3 times, 4 x 4 x 2 x 3 x 3 iterations apart, an
  // iteration of k touching 16 floats in the initialisation and 16 + 72 + 18 in the update.
  EXPECT_EQ(f(r, "B0.unique_bytes"), 288);
  EXPECT_EQ(f(r, "B0.reuse_ct"), 3);
  EXPECT_EQ(f(r, "B0.reuse_dis_iter"), 288);
  EXPECT_EQ(f(r, "B0.reuse_dis_bytes"), (16 + 16 + 72 + 18) * 4);
  // W: w does not move it; reused 4 times, 2 x 3 x 3 iterations apart, an iteration of w
  // touching 1 float in the initialisation and 1 + 18 + 18 in the update.
  EXPECT_EQ(f(r, "B1.unique_bytes"), 216);
  EXPECT_EQ(f(r, "B1.reuse_ct"), 4);
  EXPECT_EQ(f(r, "B1.reuse_dis_iter"), 18);
  EXPECT_EQ(f(r, "B1.reuse_dis_bytes"), (1 + 1 + 18 + 18) * 4);
  // Y: rx does not move it: reused 3 times by consecutive statements 12 bytes apart.
  EXPECT_EQ(f(r, "B2.acc_type.read_write"), 1);
  EXPECT_EQ(f(r, "B2.reuse_ct"), 3);
  EXPECT_EQ(f(r, "B2.reuse_dis_iter"), 1);
  EXPECT_EQ(f(r, "B2.reuse_dis_bytes"), 12);
}

TEST_F(FeaturesTest, PaddingComputedInsideTheConvolutionIsAllocatedPerIteration) {
  State s = initial("conv");
  int pad = s.find_stage("Y.pad"), conv = s.find_stage("Y");
  // Y.pad computed inside loop h of Y (after n, k): per iteration 1 x 2 x 3 x 6 floats. Y's
  // auto_unroll_max_step applies to it too.
  s.apply(std::make_shared<ComputeAtStep>(pad, conv, 2));
  s.apply(std::make_shared<PragmaStep>(conv, 0, PragmaKind::AutoUnrollMaxStep, 64));
  std::vector<StoreFeatures> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 3u) << program_text_;
  const StoreFeatures& r = rows[0];
  EXPECT_EQ(r.buffer, "Y.pad");
  // Inside k < 3 and h < 4: 12 allocations of 36 floats, written 36 times each.
  EXPECT_EQ(f(r, "alloc_size"), 144);
  EXPECT_EQ(f(r, "alloc_outer_prod"), 12);
  EXPECT_EQ(f(r, "alloc_prod"), 36 * 12);
  EXPECT_EQ(f(r, "alloc_inner_prod"), 36);
  EXPECT_EQ(f(r, "outer_prod"), 432);
  EXPECT_EQ(f(r, "auto_unroll_max_step"), 64);
  EXPECT_EQ(f(rows[2], "auto_unroll_max_step"), 64);
}

// The default GPU matmul: its tiles of A and B in shared memory are allocated by the block once
// per step of the reduction, and every store reports the block's 256 threads.
TEST(FeaturesGpuTest, SharedMemoryTilesReportTheirAllocation) {
  auto dag = test::dag_of(test::parse("kernel mm { A = input f32[64, 64]\n B = input f32[64, 64]\n C = matmul(A, B) }"), "mm");
  State s = default_schedule(dag, SamplerContext::for_gpu(parse_target("cuda:sm_80")));
  LoweredKernel k = lower_for_features(s);
  std::vector<StoreFeatures> rows = extract_features(s, kRaw);
  int shared = 0;
  for (const StoreFeatures& r : rows) {
    EXPECT_EQ(f(r, "is_gpu"), 1) << r.buffer;
    EXPECT_EQ(f(r, "threadIdx_x_len"), 256) << r.buffer;
    const Buffer* b = k.find_buffer(r.buffer);
    if (b->scope != BufferScope::Shared) continue;
    ++shared;
    EXPECT_EQ(f(r, "alloc_size"), b->num_elements() * 4) << r.buffer;
    // Once per block and step of the reduction's outer loop (8 steps of 8).
    EXPECT_EQ(f(r, "alloc_outer_prod"), f(r, "blockIdx_x_len") * 8) << r.buffer;
  }
  EXPECT_EQ(shared, 2);
}

TEST(FeaturesGpuTest, BindingsGiveTheirLengths) {
  // for bx < 4 (blockIdx.x), vt < 2 (vthread), tx < 32 (threadIdx.x):
  //   B[bx*64 + vt*32 + tx] = A[bx*64 + vt*32 + tx]
  //   for c < 3, t < 16 (threadIdx.x again: the same index as tx, 16 of the 32 threads):
  //     S[c*16 + t] = A[c*16 + t]
  Var bx = make_var("bx"), vt = make_var("vt"), tx = make_var("tx"), c = make_var("c"), t = make_var("t");
  Expr i = add(add(mul(bx, 64), mul(vt, 32)), tx), j = add(mul(c, 16), t);
  LoweredKernel k;
  k.buffers = {test::buffer("A", {256}), test::buffer("B", {256}), test::buffer("S", {48})};
  k.buffers[2].scope = BufferScope::Shared;
  k.params = {0, 1};
  Stmt fetch = make_for(c, 3, ForKind::Serial, make_for(t, 16, ForKind::ThreadBinding, make_store("S", {j}, load("A", DType::F32, {j})), IterAnnotation::ThreadX));
  Stmt threads = make_for(tx, 32, ForKind::ThreadBinding, make_seq({make_store("B", {i}, load("A", DType::F32, {i})), fetch}), IterAnnotation::ThreadX);
  k.body = make_for(bx, 4, ForKind::ThreadBinding, make_for(vt, 2, ForKind::ThreadBinding, threads, IterAnnotation::VThread), IterAnnotation::BlockX);
  std::vector<StoreFeatures> rows = extract_features(k, kRaw);
  ASSERT_EQ(rows.size(), 2u);
  // 4 blocks x 2 virtual threads x 3 x 16 threads.
  EXPECT_EQ(f(rows[1], "outer_prod"), 384);
  EXPECT_EQ(f(rows[1], "num_loops"), 5);
  EXPECT_EQ(f(rows[1], "threadIdx_x_len"), 16);
  EXPECT_EQ(f(rows[1], "B0.acc_type.write"), 1);
  EXPECT_EQ(f(rows[1], "B0.bytes"), 384 * 4);
  const StoreFeatures& r = rows[0];
  EXPECT_EQ(f(r, "is_gpu"), 1);
  EXPECT_EQ(f(r, "blockIdx_x_len"), 4);
  EXPECT_EQ(f(r, "blockIdx_y_len"), 1);
  EXPECT_EQ(f(r, "threadIdx_x_len"), 32);
  EXPECT_EQ(f(r, "threadIdx_y_len"), 1);
  EXPECT_EQ(f(r, "vthread_len"), 2);
  EXPECT_EQ(f(r, "parallel_num"), 0);  // bindings are not parallel loops
  EXPECT_EQ(f(r, "outer_prod"), 256);
  EXPECT_EQ(f(r, "num_loops"), 3);
  // Each of the two indices (bx*64 + vt*32) + tx: a multiply, a multiply-add, an addition.
  EXPECT_EQ(f(r, "int_mul"), 2 * 256);
  EXPECT_EQ(f(r, "int_mad"), 2 * 256);
  EXPECT_EQ(f(r, "int_addsub"), 2 * 256);
}

TEST(FeaturesPositionTest, AnnotatedLoopsArePlacedByWhatTheyIndex) {
  LoweredKernel k;
  k.buffers = {test::buffer("X", {16, 4, 4, 4}), test::buffer("Y", {4, 4, 4}), test::buffer("Z", {4, 4, 4})};
  k.params = {0, 1, 2};
  Var p = make_var("p"), u = make_var("u"), v = make_var("v");
  Var r0 = make_var("r0"), r1 = make_var("r1"), r2 = make_var("r2"), a = make_var("a"), b = make_var("b");
  // Y[p / 4, p % 4, v] += X[p, v, u, 0]: p (parallel) indexes two dimensions: mixed; v
  // (vectorized) the last: inner spatial; u (unrolled) only the value: the one reduction loop.
  Expr y_index0 = div(p, int_imm(4)), y_index1 = mod(p, int_imm(4));
  Stmt first = make_for(
      p, 16, ForKind::Parallel,
      make_for(u, 4, ForKind::Unrolled,
               make_for(v, 4, ForKind::Vectorized,
                        make_store("Y", {y_index0, y_index1, v},
                                   add(load("Y", DType::F32, {y_index0, y_index1, v}), load("X", DType::F32, {p, v, u, int_imm(0)}))))));
  // Z[a, b, 0] += X[r0, r1, r2, b] under loops a (parallel), r0, r1 (unrolled), r2, b
  // (vectorized): b indexes the middle dimension; r1 is the middle of three reduction loops.
  Stmt second = make_for(
      a, 4, ForKind::Parallel,
      make_for(r0, 16, ForKind::Serial,
               make_for(r1, 4, ForKind::Unrolled,
                        make_for(r2, 4, ForKind::Serial,
                                 make_for(b, 4, ForKind::Vectorized,
                                          make_store("Z", {a, b, int_imm(0)},
                                                     add(load("Z", DType::F32, {a, b, int_imm(0)}), load("X", DType::F32, {r0, r1, r2, b}))))))));
  // Z[0, 0, 0] = X[r1, 0, 0, r0] under loops a (parallel, unused) and r0 (unrolled, the
  // outermost of r0 and r1).
  Stmt third = make_for(
      a, 4, ForKind::Parallel,
      make_for(r0, 4, ForKind::Unrolled,
               make_for(r1, 4, ForKind::Serial,
                        make_store("Z", {int_imm(0), int_imm(0), int_imm(0)}, load("X", DType::F32, {r1, int_imm(0), int_imm(0), r0})))));
  // L[0] += X[a, r0, 0, 0] for a local L allocated inside a (parallel): a is its consumer's loop,
  // outer spatial, though the store does not index it; r0 (unrolled) is its reduction loop.
  Stmt fourth = make_for(
      a, 4, ForKind::Parallel,
      make_allocate("L", make_for(r0, 4, ForKind::Unrolled,
                                  make_store("L", {int_imm(0)}, add(load("L", DType::F32, {int_imm(0)}), load("X", DType::F32, {a, r0, int_imm(0), int_imm(0)}))))));
  k.buffers.push_back(test::buffer("L", {1}));
  k.buffers.back().scope = BufferScope::Local;
  k.body = make_seq({first, second, third, fourth});
  std::vector<StoreFeatures> rows = extract_features(k, kRaw);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(f(rows[3], "parallel_type.outer_spatial"), 1);
  EXPECT_EQ(f(rows[3], "unroll_type.inner_reduce"), 1);
  EXPECT_EQ(f(rows[3], "alloc_outer_prod"), 4);
  EXPECT_EQ(f(rows[0], "parallel_type.mixed"), 1);
  EXPECT_EQ(f(rows[0], "vec_type.inner_spatial"), 1);
  EXPECT_EQ(f(rows[0], "unroll_type.inner_reduce"), 1);
  EXPECT_EQ(f(rows[1], "parallel_type.outer_spatial"), 1);
  EXPECT_EQ(f(rows[1], "vec_type.middle_spatial"), 1);
  EXPECT_EQ(f(rows[1], "unroll_type.middle_reduce"), 1);
  EXPECT_EQ(f(rows[2], "parallel_type.outer_spatial"), 1);
  EXPECT_EQ(f(rows[2], "unroll_type.outer_reduce"), 1);
  EXPECT_EQ(f(rows[2], "vec_type.none"), 1);
  for (const StoreFeatures& r : rows) {
    for (const char* kind : {"vec", "unroll", "parallel"}) {
      double ones = 0;
      for (const char* pos : {"none", "inner_spatial", "middle_spatial", "outer_spatial", "inner_reduce", "middle_reduce", "outer_reduce", "mixed"})
        ones += f(r, std::string(kind) + "_type." + pos);
      EXPECT_EQ(ones, 1) << kind;
    }
  }
  // p / 4 and p % 4 are integer division and modulo, in the store and in the load.
  EXPECT_EQ(f(rows[0], "int_divmod"), 4 * 16 * 4 * 4);
}

TEST(FeaturesErrorTest, AStoreToAnUnknownBufferIsNamed) {
  LoweredKernel k;
  k.name = "broken";
  k.buffers = {test::buffer("A", {4})};
  k.body = make_store("Q", {int_imm(0)}, load("A", DType::F32, {int_imm(0)}));
  try {
    extract_features(k);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'Q'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
}

// The paper's 164 in its order, then the two memory pragmas and the two costs of ragged tiles.
TEST(FeatureTableTest, OneHundredSixtyEightUniqueNamesInPaperOrder) {
  std::set<std::string> names;
  for (int i = 0; i < kNumFeatures; ++i) names.insert(std::string(feature_name(i)));
  EXPECT_EQ(names.size(), 171u);
  EXPECT_EQ(feature_name(0), "float_mad");
  EXPECT_EQ(feature_name(56), "vthread_len");
  EXPECT_EQ(feature_name(57), "B0.acc_type.read");
  EXPECT_EQ(feature_name(57 + 18), "B1.acc_type.read");
  EXPECT_EQ(feature_name(146), "B4.stride");
  EXPECT_EQ(feature_name(147), "arith_intensity_curve_0");
  EXPECT_EQ(feature_name(157), "alloc_size");
  EXPECT_EQ(feature_name(163), "auto_unroll_max_step");
  EXPECT_EQ(feature_name(164), "prefetch_bytes");
  EXPECT_EQ(feature_name(165), "stream_stores");
  EXPECT_EQ(feature_name(166), "wasted_lanes");
  EXPECT_EQ(feature_name(167), "guarded_iters");
  EXPECT_EQ(feature_name(168), "tensor_calls");
  EXPECT_EQ(feature_name(170), "tensor_accumulators");
  EXPECT_EQ(feature_group(56), FeatureGroup::Computation);
  EXPECT_EQ(feature_group(57), FeatureGroup::BufferAccess);
  EXPECT_EQ(feature_group(147), FeatureGroup::ArithmeticIntensity);
  EXPECT_EQ(feature_group(160), FeatureGroup::Allocation);
  EXPECT_EQ(feature_group(161), FeatureGroup::OuterScope);
  EXPECT_EQ(feature_group(168), FeatureGroup::TensorIntrinsic);
  EXPECT_THROW(feature_name(171), std::out_of_range);
  EXPECT_THROW(feature_name(-1), std::out_of_range);
}

TEST(FeaturesDeterminismTest, EqualProgramsHaveEqualRows) {
  // Two parses give equal programs built from different variables and nodes.
  Program first = test::parse(kKernels), second = test::parse(kKernels);
  for (const char* kernel : {"copy", "mm", "conv"}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      State a = random_schedule(test::dag_of(first, kernel), seed), b = random_schedule(test::dag_of(second, kernel), seed);
      std::vector<StoreFeatures> ra = extract_features(a), rb = extract_features(b);
      ASSERT_EQ(ra.size(), rb.size()) << kernel << " seed " << seed;
      for (size_t i = 0; i < ra.size(); ++i) {
        EXPECT_EQ(ra[i].buffer, rb[i].buffer);
        EXPECT_EQ(ra[i].values, rb[i].values) << kernel << " seed " << seed << " row " << i;
        for (float x : ra[i].values) EXPECT_TRUE(std::isfinite(x)) << kernel << " seed " << seed;
      }
      EXPECT_EQ(extract_features(a).front().values, ra.front().values) << "the same program twice";
    }
  }
}

// Programs of the search space (sketches, cache stages, packed layouts, GPU bindings): equal
// seeds give equal rows, every value finite and not negative, a few rows per program.
TEST(FeaturesDeterminismTest, SampledProgramsHaveFewFiniteRows) {
  Program first = test::parse(kKernels), second = test::parse(kKernels);
  for (const char* target : {"host", "cuda:sm_80"}) {
    SamplerContext ctx = std::string(target) == "host" ? SamplerContext::for_cpu(Target{}) : SamplerContext::for_gpu(parse_target(target));
    for (const char* kernel : {"mm", "conv"}) {
      auto dag_a = test::dag_of(first, kernel), dag_b = test::dag_of(second, kernel);
      std::vector<Sketch> sketches_a = generate_sketches(dag_a, ctx, SketchRules::for_context(ctx));
      std::vector<Sketch> sketches_b = generate_sketches(dag_b, ctx, SketchRules::for_context(ctx));
      Annotator annotator_a(ctx), annotator_b(ctx);
      std::mt19937_64 rng_a(7), rng_b(7);
      for (int n = 0; n < 20; ++n) {
        std::vector<StoreFeatures> ra = extract_features(sample_program(sketches_a, annotator_a, rng_a));
        std::vector<StoreFeatures> rb = extract_features(sample_program(sketches_b, annotator_b, rng_b));
        ASSERT_EQ(ra.size(), rb.size()) << target << " " << kernel << " #" << n;
        EXPECT_LE(ra.size(), 8u) << target << " " << kernel << " #" << n;
        for (size_t i = 0; i < ra.size(); ++i) {
          EXPECT_EQ(ra[i].values, rb[i].values) << target << " " << kernel << " #" << n << " row " << i;
          EXPECT_EQ(f(ra[i], "is_gpu"), std::string(target) == "host" ? 0 : 1);
          for (int x = 0; x < kNumFeatures; ++x)
            EXPECT_TRUE(std::isfinite(ra[i].values[x]) && ra[i].values[x] >= 0) << feature_name(x) << " = " << ra[i].values[x];
        }
      }
    }
  }
}

// A tensorized nest: its calls, the operand bytes of one call and the accumulators of the
// register tile around the calls are features; stores outside a nest have none.
TEST(FeaturesTensorTest, TensorizedNestCountsCallsOperandBytesAndAccumulators) {
  const Program program = test::parse(R"(kernel dense_bf16 {
  X = input bf16[6, 12]
  W = const bf16[32, 12]
  Y[i:6, j:32] = sum(k:12, f32(X[i, k]) * f32(W[j, k]))
})");
  State s(test::dag_of(program, "dense_bf16"));
  const int y = s.find_stage("Y");
  // Leaves i, j, k -> i, j.0, j.1, k.0, k.1 -> i, k.0, j.0, j.1 (tensorized), k.1.
  s.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{16}));
  s.apply(std::make_shared<SplitStep>(y, 3, std::vector<int64_t>{2}));
  s.apply(std::make_shared<ReorderStep>(y, std::vector<int>{0, 3, 1, 2, 4}));
  s.apply(std::make_shared<AnnotateStep>(y, 3, IterAnnotation::Tensorize));
  std::vector<StoreFeatures> rows = extract_features(lower_for_features(s), kRaw);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(f(rows[0], "tensor_calls"), 0);  // the initialisation
  EXPECT_EQ(f(rows[1], "tensor_calls"), 6 * 6 * 2);
  EXPECT_EQ(f(rows[1], "tensor_call_bytes"), 2 * 2 + 16 * 2 * 2);  // a pair of X, 16 pairs of W
  EXPECT_EQ(f(rows[1], "tensor_accumulators"), 2);                 // j.0's two vectors inside k.0
  EXPECT_EQ(f(rows[1], "vec_num"), 0);
}

}  // namespace
}  // namespace ansor
