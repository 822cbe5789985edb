// Masked vectors: the partial last vector of a ragged split is printed as masked loads and
// stores (ansor_rt::vload_masked, vstore_masked) while the whole vectors stay plain, and the
// compiled kernel computes what the naive program does (the measurer checks each candidate
// against the reference before timing it).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "codegen/cpp_generator.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "measure/host_target.h"
#include "measure/measurer.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

// C[i:8, j:53] = sum(k:32, A[i, k] * B[k, j]): 53 outputs a row, 3 whole vectors of 16 and 5.
std::shared_ptr<const ComputeDAG> matmul_53() {
  return test::dag_of(test::parse("kernel mm { A = input f32[8, 32]\n B = input f32[32, 53]\n C[i:8, j:53] = sum(k:32, A[i, k] * B[k, j]) }"), "mm");
}

constexpr int kC = 2;

// j split by 16 lanes (ragged: 4 x 16 > 53), the lanes vectorised inside the reduction.
State vectors_of_16(const std::shared_ptr<const ComputeDAG>& dag) {
  State s(dag);
  s.apply(std::make_shared<SplitStep>(kC, 1, std::vector<int64_t>{16}));      // i, j.0, j.1, k
  s.apply(std::make_shared<ReorderStep>(kC, std::vector<int>{0, 1, 3, 2}));   // i, j.0, k, j.1
  s.apply(std::make_shared<AnnotateStep>(kC, 3, IterAnnotation::Vectorize));
  return s;
}

// j split into register tiles of 2 vectors of 8 lanes (ragged: 4 x 16 > 53), the tile unrolled.
State register_tiles(const std::shared_ptr<const ComputeDAG>& dag) {
  State s(dag);
  s.apply(std::make_shared<SplitStep>(kC, 1, std::vector<int64_t>{2, 8}));         // i, j.0, j.1, j.2, k
  s.apply(std::make_shared<ReorderStep>(kC, std::vector<int>{0, 1, 4, 2, 3}));     // i, j.0, k, j.1, j.2
  s.apply(std::make_shared<AnnotateStep>(kC, 3, IterAnnotation::Unroll));
  s.apply(std::make_shared<AnnotateStep>(kC, 4, IterAnnotation::Vectorize));
  return s;
}

std::string emitted(const State& s) {
  const CppGenerator cpp;
  return cpp.kernel_definitions(lower_state(s, "mm"), s.dag(), "mm", "mm", "test");
}

// B[i:8, j:53] = A[i, j] * 2 with j split by 16 lanes (ragged: 4 x 16 > 53).
State scaled_rows_by_16() {
  auto dag = test::dag_of(test::parse("kernel s { A = input f32[8, 53]\n B[i:8, j:53] = A[i, j] * 2.0 }"), "s");
  State s(dag);
  s.apply(std::make_shared<SplitStep>(1, 1, std::vector<int64_t>{16}));
  s.apply(std::make_shared<AnnotateStep>(1, 2, IterAnnotation::Vectorize));
  return s;
}

TEST(MaskedVectorTest, TheLastVectorOfARaggedSplitIsMasked) {
  const std::string code = emitted(scaled_rows_by_16());
  // Whole vectors of 16 stay plain, the last 5 lanes are a masked vector of 8.
  EXPECT_NE(code.find("ansor_rt::vstore<float, 16>("), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vload<float, 16>("), std::string::npos) << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(ansor_rt::vstore_masked<float, 8>\([^;]*, 5\);)"))) << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(ansor_rt::vload_masked<float, 8>\([^;]*, 5\))"))) << code;
  EXPECT_EQ(code.find("ANSOR_VECTORIZE_LOOP"), std::string::npos) << code;
}

// Streaming stores write whole vectors: the masked last vector is stored normally, and its loads
// are prefetched as the whole vectors' are.
TEST(MaskedVectorTest, AMaskedVectorStoresNormallyWhereTheStageStreams) {
  State s = scaled_rows_by_16();
  s.apply(std::make_shared<PragmaStep>(1, 0, PragmaKind::StreamStores, 1));
  s.apply(std::make_shared<PragmaStep>(1, 0, PragmaKind::PrefetchBytes, 256));
  const std::string code = emitted(s);
  EXPECT_NE(code.find("ansor_rt::vstore_stream<float, 16>("), std::string::npos) << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(ansor_rt::vstore_masked<float, 8>\([^;]*, 5\);)"))) << code;
  EXPECT_EQ(code.find("ansor_rt::vstore_stream<float, 8>("), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::prefetch(&A[((i * 53) + 48)], 256);"), std::string::npos) << code;
}

// Inside the reduction the vector loop is not the tail peeler's: the whole vectors run
// unswitched, the last one of each row masked to a count computed at run time.
TEST(MaskedVectorTest, ARaggedVectorInsideAReductionIsMaskedInTheLastTile) {
  const std::string code = emitted(vectors_of_16(matmul_53()));
  EXPECT_NE(code.find("ansor_rt::vstore<float, 16>("), std::string::npos) << code;
  EXPECT_NE(code.find("const int64_t ansor_active = "), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vstore_masked<float, 16>("), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vload_masked<float, 16>("), std::string::npos) << code;
  EXPECT_EQ(code.find("ANSOR_VECTORIZE_LOOP"), std::string::npos) << code;
}

TEST(MaskedVectorTest, VectorsOfRaggedRegisterTilesAreMaskedToACountKnownAtRunTime) {
  const std::string code = emitted(register_tiles(matmul_53()));
  EXPECT_NE(code.find("const int64_t ansor_active = "), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vstore_masked<float, 8>("), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vstore<float, 8>("), std::string::npos) << "the whole tiles run unmasked\n" << code;
  EXPECT_EQ(code.find("ANSOR_VECTORIZE_LOOP"), std::string::npos) << code;
}

// Lanes assembled one by one (a load at a stride) are evaluated only where active.
TEST(MaskedVectorTest, LanesAssembledOneByOneAreLoadedOnlyWhereActive) {
  auto dag = test::dag_of(test::parse("kernel t { A = input f32[53, 8]\n B[j:8, i:53] = A[i, j] * 2.0 }"), "t");
  State s(dag);
  s.apply(std::make_shared<SplitStep>(1, 1, std::vector<int64_t>{16}));
  s.apply(std::make_shared<AnnotateStep>(1, 2, IterAnnotation::Vectorize));
  const std::string code = emitted(s);
  // The last vector: lanes 0..4 of the strided load, zeros for the 3 masked lanes.
  EXPECT_NE(code.find("float(0), float(0), float(0)}"), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vstore_masked<float, 8>("), std::string::npos) << code;
  // The interpreter gives the masked program the naive one's results.
  LoweredKernel naive = lower_state(State(dag), "naive"), masked = lower_state(s, "masked");
  std::vector<std::vector<double>> want = test::random_args(naive, 3), got = want;
  interpret(naive, want);
  interpret(masked, got);
  EXPECT_EQ(got, want);
}

// bf16 rows of 53 (3 vectors of 16 and 5 lanes): y = bf16(2 x) from f32, z = f32(y) + 1 back.
State bf16_rows_by_16() {
  auto dag = test::dag_of(test::parse("kernel b { X = input f32[4, 53]\n Y[i:4, j:53] = bf16(X[i, j] * 2.0)\n Z[i:4, j:53] = f32(Y[i, j]) + 1.0 }"), "b");
  State s(dag);
  for (int stage : {1, 2}) {
    s.apply(std::make_shared<SplitStep>(stage, 1, std::vector<int64_t>{16}));
    s.apply(std::make_shared<AnnotateStep>(stage, 2, IterAnnotation::Vectorize));
  }
  return s;
}

// bf16 values are float vectors: stores round whole vectors to halves, loads widen them back,
// the last vector masked.
TEST(MaskedVectorTest, Bf16VectorsAreStoredAndLoadedWhole) {
  const std::string code = emitted(bf16_rows_by_16());
  EXPECT_NE(code.find("ansor_rt::vstore_bf16<16>(&Y["), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vround_bf16<16>("), std::string::npos) << code;
  EXPECT_NE(code.find("ansor_rt::vload_bf16<16>(&Y["), std::string::npos) << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(ansor_rt::vstore_bf16_masked<8>\([^;]*, 5\);)"))) << code;
  EXPECT_TRUE(std::regex_search(code, std::regex(R"(ansor_rt::vload_bf16_masked<8>\([^;]*, 5\))"))) << code;
  EXPECT_EQ(code.find("ansor_rt::f32_to_bf16(ansor_lanes"), std::string::npos) << code;
}

TEST(MaskedVectorTest, CompiledKernelsWithMaskedTailsComputeTheReference) {
  const fs::path dir = test::test_temp_dir("ansor_masked_vector_test");
  fs::remove_all(dir);
  KernelCompiler compiler = make_kernel_compiler();
  MeasureOptions options;
  options.min_seconds = 0.001;
  options.run_timeout_seconds = 30;
  options.worker_path = ANSOR_TEST_WORKER;
  options.lock_dir = dir.string();
  options.build.runtime_include = default_runtime_include();
  options.build.work_dir = (dir / "work").string();
  const CppGenerator cpp;
  Measurer measurer(compiler, detect_host(compiler), cpp, options);
  auto dag = matmul_53();
  std::vector<Record> records = measurer.measure({{"mm", vectors_of_16(dag)}, {"mm", register_tiles(dag)}});
  ASSERT_EQ(records.size(), 2u);
  records.push_back(measurer.measure({{"s", scaled_rows_by_16()}})[0]);
  records.push_back(measurer.measure({{"b", bf16_rows_by_16()}})[0]);
  for (const Record& r : records) EXPECT_TRUE(r.ok()) << r.error_message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ansor
