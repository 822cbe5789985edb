// The builder on its own: several candidates per translation unit without one bad candidate
// failing the others, compile time limits, and symbols that never collide in one process.
#include "measure/builder.h"

#include "codegen/cpp_generator.h"
#include "codegen/cuda_generator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "measure/measurer.h"
#include "sampler/default_schedule.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

class BuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_builder_test");
    fs::remove_all(dir_);
    program_ = test::parse("kernel add { A = input f32[16]\n B[i:16] = A[i] + 1.0 }");
    dag_ = std::make_shared<const ComputeDAG>(program_.kernels[0].dag);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Builder make_builder(int per_unit, double timeout_seconds = 60, const std::string& compiler = "",
                       const std::string& runtime_include = default_runtime_include()) const {
    BuildOptions options;
    options.per_unit = per_unit;
    options.timeout_seconds = timeout_seconds;
    options.runtime_include = runtime_include;
    options.work_dir = (dir_ / "work").string();
    return Builder(make_kernel_compiler(compiler), Target{}, cpp_, options);
  }

  Candidate candidate(PlantedFault fault = PlantedFault::None) const { return {"add", State(dag_), fault}; }

  fs::path dir_;
  const CppGenerator cpp_{};
  Program program_;
  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(BuilderTest, ACompileErrorFailsOnlyItsOwnCandidate) {
  Builder builder = make_builder(4);
  std::vector<BuildResult> built = builder.build({candidate(), candidate(PlantedFault::CompileError), candidate()});
  ASSERT_EQ(built.size(), 3u);
  EXPECT_EQ(built[0].error, MeasureError::None) << built[0].message;
  EXPECT_EQ(built[1].error, MeasureError::CompileError);
  EXPECT_NE(built[1].message.find("planted compile error"), std::string::npos) << built[1].message;
  EXPECT_EQ(built[2].error, MeasureError::None) << built[2].message;
  EXPECT_TRUE(fs::exists(built[0].library));
  EXPECT_TRUE(fs::exists(built[2].library));
  EXPECT_EQ(builder.built(), 2);
}

TEST_F(BuilderTest, CandidatesOfOneProgramShareItsIdentityAndKnownProgramsAreNotCompiled) {
  Builder builder = make_builder(1);
  State split(dag_);
  split.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{4}));
  std::vector<std::string> asked;
  std::vector<BuildResult> built = builder.build({candidate(), candidate(), {"add", split, PlantedFault::None}, candidate(PlantedFault::CompileError)},
                                                 [&](const std::string& program) {
                                                   asked.push_back(program);
                                                   return asked.size() == 2;
                                                 });
  ASSERT_EQ(built.size(), 4u);
  EXPECT_EQ(asked, (std::vector<std::string>{built[0].program, built[1].program, built[2].program, built[3].program}));
  // The same program under two symbols; another loop program; the same with a fault planted.
  EXPECT_NE(built[0].symbol, built[1].symbol);
  EXPECT_EQ(built[0].program, built[1].program);
  EXPECT_NE(built[2].program, built[0].program);
  EXPECT_NE(built[3].program, built[0].program);
  // The second was known: printed, not compiled.
  EXPECT_TRUE(fs::exists(built[0].library));
  EXPECT_TRUE(built[1].library.empty());
  EXPECT_EQ(built[1].error, MeasureError::None);
  EXPECT_EQ(builder.built(), 2);
  EXPECT_GT(builder.codegen_seconds(), 0);
}

TEST_F(BuilderTest, ClangUnitsReadThePreludePrecompiledOnceOthersParseIt) {
  for (const char* compiler : {"clang++", "g++"}) {
    if (run_command_output(std::string("command -v ") + compiler + " 2>/dev/null").empty()) continue;
    Builder builder = make_builder(1, 60, compiler);
    std::vector<BuildResult> first = builder.build({candidate(), candidate()});
    std::vector<BuildResult> second = builder.build({candidate()});
    for (const BuildResult& b : {first[0], first[1], second[0]}) EXPECT_EQ(b.error, MeasureError::None) << compiler << ": " << b.message;
    fs::path pch = dir_ / "work" / "candidate_prelude.h.pch";
    EXPECT_EQ(fs::exists(pch), builder.compiler().is_clang()) << compiler;
    fs::remove_all(dir_ / "work");
  }
}

// A runtime header edited while a tuning run goes on (a developer's, or an update of the
// checkout) made clang refuse the precompiled prelude for every later candidate.
TEST_F(BuilderTest, APreludeIsPrecompiledAgainWhenARuntimeHeaderChanges) {
  if (run_command_output("command -v clang++ 2>/dev/null").empty()) GTEST_SKIP() << "no clang++";
  fs::path include = dir_ / "include";
  fs::create_directories(include);
  fs::copy(default_runtime_include(), include, fs::copy_options::recursive);
  Builder builder = make_builder(1, 60, "clang++", include.string());
  std::vector<BuildResult> first = builder.build({candidate()});
  ASSERT_EQ(first[0].error, MeasureError::None) << first[0].message;
  fs::path pch = dir_ / "work" / "candidate_prelude.h.pch";
  ASSERT_TRUE(fs::exists(pch));
  const fs::file_time_type precompiled = fs::last_write_time(pch);
  fs::path header = include / "ansor" / "vector_math.h";
  std::ofstream(header, std::ios::app) << "// edited while tuning\n";
  fs::last_write_time(header, fs::last_write_time(header) + std::chrono::seconds(2));
  std::vector<BuildResult> second = builder.build({candidate()});
  EXPECT_EQ(second[0].error, MeasureError::None) << second[0].message;
  EXPECT_NE(fs::last_write_time(pch), precompiled);
}

TEST_F(BuilderTest, UnitSizesArePlannedFromCompileTimes) {
  // Cheap candidates: after one batch the planner puts several in a unit, yet leaves both
  // compilers a unit each.
  Builder builder = make_builder(0);
  std::vector<Candidate> batch(16, candidate());
  builder.build(batch);
  std::vector<BuildResult> built = builder.build(batch);
  std::set<std::string> libraries;
  for (const BuildResult& b : built) {
    EXPECT_EQ(b.error, MeasureError::None) << b.message;
    libraries.insert(b.library);
  }
  EXPECT_GE(libraries.size(), 2u);
  EXPECT_LT(libraries.size(), 16u);
}

TEST_F(BuilderTest, ACompilerThatRunsPastItsLimitIsACompileTimeout) {
  Builder builder = make_builder(2, 0.001);
  std::vector<BuildResult> built = builder.build({candidate(), candidate()});
  for (const BuildResult& b : built) {
    EXPECT_EQ(b.error, MeasureError::CompileTimeout);
    EXPECT_NE(b.message.find("longer than 0.001 s"), std::string::npos) << b.message;
  }
  EXPECT_EQ(builder.built(), 0);
}

// Once the builder knows what a candidate costs to compile, a run that takes many times that
// is stopped long before the 30 s cap: here a compiler that stalls once the flag file exists.
TEST_F(BuilderTest, ACompileFarSlowerThanTheOthersStopsBeforeTheCap) {
  fs::create_directories(dir_);
  const fs::path flag = dir_ / "stall", wrapper = dir_ / "stalling-clang++";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nif [ -e '" << flag.string() << "' ]; then exec sleep 60; fi\nexec clang++ \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  Builder builder = make_builder(1, 30, wrapper.string());
  for (const BuildResult& b : builder.build({candidate(), candidate()})) EXPECT_EQ(b.error, MeasureError::None) << b.message;
  std::ofstream(flag).put('\n');
  auto start = std::chrono::steady_clock::now();
  std::vector<BuildResult> built = builder.build({candidate()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].error, MeasureError::CompileTimeout);
  const std::string said = "longer than ";
  const size_t at = built[0].message.find(said);
  ASSERT_NE(at, std::string::npos) << built[0].message;
  const double limit = std::stod(built[0].message.substr(at + said.size()));
  EXPECT_GE(limit, 5);
  EXPECT_LT(limit, 30);
  EXPECT_LT(seconds, 25);
}

TEST_F(BuilderTest, SymbolsAreUniqueAcrossBuildersOfOneProcess) {
  // Shared libraries are loaded by symbol into one process: two builders must not reuse one.
  std::set<std::string> symbols;
  for (int b = 0; b < 2; ++b) {
    Builder builder = make_builder(1);
    for (const BuildResult& r : builder.build({candidate(), candidate()})) {
      EXPECT_EQ(r.error, MeasureError::None) << r.message;
      EXPECT_TRUE(symbols.insert(r.symbol).second) << r.symbol;
    }
  }
}

// A GPU program over the device's limits would compile and then fail at every launch (as one
// asking for more shared memory than an H200 has did): it is refused before any compiler runs,
// so this needs no nvcc.
TEST_F(BuilderTest, AGpuProgramOverTheTargetsLimitsIsAnInvalidScheduleNotACompile) {
  Program program = test::parse("kernel mm { A = input f32[64, 32]\n B = input f32[32, 48]\n C = matmul(A, B) }");
  auto dag = test::dag_of(program, "mm");
  Target target = parse_target("cuda:sm_90");
  State state = default_schedule(dag, SamplerContext::for_gpu(target));
  target.gpu.max_shared_bytes_per_block = 64;  // the default schedule reads its tiles through shared memory
  BuildOptions options;
  options.runtime_include = default_runtime_include();
  options.work_dir = (dir_ / "work").string();
  const CudaGenerator cuda;
  Builder builder(KernelCompiler{"/nonexistent/nvcc", {}, "nvcc 0"}, target, cuda, options);
  std::vector<BuildResult> results = builder.build({{"mm", state}});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureError::InvalidSchedule);
  EXPECT_NE(results[0].message.find("shared memory per block, more than the 64 allowed"), std::string::npos) << results[0].message;
  EXPECT_EQ(builder.built(), 0);
}

}  // namespace
}  // namespace ansor
