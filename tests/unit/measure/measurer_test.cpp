// Measurement end to end, with the real kernel compiler and worker process: candidates are
// built, checked against the reference and timed; planted faults (compile errors, crashes,
// hangs, wrong results) become records of their kind.
#include "measure/measurer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "codegen/cpp_generator.h"
#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "measure/host_target.h"
#include "records/record_filter.h"
#include "sampler/annotation.h"
#include "sampler/sketch_generator.h"
#include "schedule/random_schedule.h"
#include "schedule/steps.h"
#include "support/file_lock.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

class MeasurerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_measure_test");
    fs::remove_all(dir_);
    program_ = test::parse("kernel mm { A = input f32[48, 32]\n B = const f32[32, 40]\n C[i:48, j:40] = sum(k:32, A[i, k] * B[k, j]) }");
    dag_ = std::make_shared<const ComputeDAG>(program_.kernels[0].dag);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Measurer> make_measurer(double run_timeout = 5, double min_seconds = 0.01, std::string lock_dir = "",
                                          double early_stop_factor = 10, bool reuse_programs = false) {
    KernelCompiler compiler = make_kernel_compiler();
    MeasureOptions options;
    options.reuse_programs = reuse_programs;
    options.min_seconds = min_seconds;
    options.early_stop_factor = early_stop_factor;
    options.run_timeout_seconds = run_timeout;
    options.worker_path = ANSOR_TEST_WORKER;
    options.lock_dir = lock_dir.empty() ? dir_.string() : lock_dir;
    options.build.runtime_include = default_runtime_include();
    options.build.work_dir = (dir_ / "work").string();
    return std::make_unique<Measurer>(compiler, detect_host(compiler), cpp_, options);
  }

  // A reasonable schedule of a matmul: i split and parallel, j vectorised, B packed.
  static State tiled(const std::shared_ptr<const ComputeDAG>& dag) {
    State s(dag);
    s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{8}));
    s.apply(std::make_shared<SplitStep>(2, 2, std::vector<int64_t>{8}));
    s.apply(std::make_shared<ReorderStep>(2, std::vector<int>{0, 2, 4, 1, 3}));
    s.apply(std::make_shared<AnnotateStep>(2, 0, IterAnnotation::Parallel));
    s.apply(std::make_shared<AnnotateStep>(2, 4, IterAnnotation::Vectorize));
    s.apply(std::make_shared<LayoutRewriteStep>(1));
    return s;
  }
  State tiled() const { return tiled(dag_); }

  fs::path dir_;
  const CppGenerator cpp_{};
  Program program_;
  std::shared_ptr<const ComputeDAG> dag_;
};

// The reference walks a matmul's rows (i, k, j) rather than its columns, and adds the same terms
// in the same order as the naive program: its outputs are the naive program's, bit for bit. A
// reduction with one spatial loop (a softmax's row maximum) keeps its order.
TEST_F(MeasurerTest, TheReferenceIsTheNaiveProgramsSumsWalkedByRows) {
  Program p = test::parse(R"(
kernel mm {
  A = input f32[12, 20]
  B = input f32[20, 9]
  C[i:12, j:9] = sum(k:20, A[i, k] * B[k, j])
}
kernel sm {
  X = input f32[5, 30]
  Y = softmax(X)
}
)");
  for (const Kernel& k : p.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(k.dag);
    State reference = reference_state(dag);
    LoweredKernel naive = lower_state(State(dag), "naive");
    LoweredKernel walked = lower_state(reference, "reference");
    std::vector<std::vector<double>> expected = test::random_args(naive, 3);
    std::vector<std::vector<double>> got = expected;
    interpret(naive, expected);
    interpret(walked, got);
    EXPECT_EQ(got, expected) << k.name;
    if (k.name == "mm") {
      const Stage& c = reference.stage(reference.find_stage("C"));
      std::vector<std::string> loops;
      for (int leaf : c.leaves) loops.push_back(c.iters[leaf].name);
      EXPECT_EQ(loops, (std::vector<std::string>{"i", "k", "j"}));
    } else {
      EXPECT_TRUE(reference.steps().empty()) << k.name;
    }
  }
}

TEST_F(MeasurerTest, PlantedFaultsBecomeRecordsOfTheirKind) {
  auto measurer = make_measurer(3);
  std::vector<Candidate> batch = {
      {"mm", tiled(), PlantedFault::None},        {"mm", tiled(), PlantedFault::CompileError},
      {"mm", tiled(), PlantedFault::Crash},       {"mm", tiled(), PlantedFault::Hang},
      {"mm", tiled(), PlantedFault::WrongResult}, {"mm", State(dag_), PlantedFault::None},
  };
  std::vector<Record> records = measurer->measure(batch);
  ASSERT_EQ(records.size(), batch.size());
  EXPECT_EQ(records[0].error, MeasureError::None) << records[0].error_message;
  EXPECT_GT(records[0].seconds, 0);
  EXPECT_GE(records[0].repeats, 3);
  EXPECT_EQ(records[1].error, MeasureError::CompileError);
  EXPECT_NE(records[1].error_message.find("planted compile error"), std::string::npos) << records[1].error_message;
  EXPECT_EQ(records[2].error, MeasureError::Crash);
  EXPECT_EQ(records[3].error, MeasureError::RunTimeout);
  EXPECT_EQ(records[4].error, MeasureError::WrongResult);
  // The worker was restarted after the crash and the hang.
  EXPECT_EQ(records[5].error, MeasureError::None) << records[5].error_message;
  for (const Record& r : records) {
    EXPECT_EQ(r.workload_key, dag_->workload_key());
    EXPECT_EQ(r.compiler, measurer->compiler().identity());
    EXPECT_EQ(r.target, measurer->target().to_string());
  }
  EXPECT_EQ(records[0].steps.size(), tiled().steps().size());
}

TEST_F(MeasurerTest, ARestartedWorkerReadsTheReferenceOutputsItsPredecessorKept) {
  auto measurer = make_measurer(3);
  ASSERT_TRUE(measurer->measure({{"mm", tiled(), PlantedFault::None}})[0].ok());
  fs::path outputs = dir_ / "work" / ("reference-" + dag_->workload_key() + ".bin");
  ASSERT_TRUE(fs::exists(outputs));
  EXPECT_EQ(fs::file_size(outputs), 48u * 40u * sizeof(float));
  // Outputs of another program in the file: after the crash, the new worker compares with them
  // (and so finds the right program wrong), which shows it did not run the reference again.
  std::ofstream(outputs, std::ios::binary | std::ios::trunc) << std::string(48 * 40 * sizeof(float), '\0');
  std::vector<Record> records = measurer->measure({{"mm", tiled(), PlantedFault::Crash}, {"mm", tiled(), PlantedFault::None}});
  EXPECT_EQ(records[0].error, MeasureError::Crash);
  EXPECT_EQ(records[1].error, MeasureError::WrongResult) << records[1].error_message;
}

TEST_F(MeasurerTest, AMeasurementLockThatCannotBeTakenIsAnError) {
  // Tests run as root, so an unwritable directory is a path under a regular file.
  auto measurer = make_measurer(3, 0.01, "/dev/null/locks");
  try {
    measurer->measure({{"mm", tiled(), PlantedFault::None}});
    FAIL() << "measured without the lock";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/null/locks/ansor-measure-"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Not a directory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(measurer->built(), 0);
}

TEST_F(MeasurerTest, TimeWaitingForTheMeasurementLockIsCounted) {
  auto measurer = make_measurer(3);
  measurer->measure({{"mm", tiled(), PlantedFault::None}});
  EXPECT_LT(measurer->lock_wait_seconds(), 0.2);
  // Another measurer of the target holds the lock for 0.5 s.
  std::string path = (dir_ / ("ansor-measure-" + measurer->target().file_stem() + ".lock")).string();
  auto held = std::make_unique<LockedFile>(path, O_RDWR | O_CREAT, LockedFile::Mode::Exclusive, 0666);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    held.reset();
  });
  Record r = measurer->measure({{"mm", tiled(), PlantedFault::None}})[0];
  release.join();
  EXPECT_TRUE(r.ok()) << r.error_message;
  EXPECT_GE(measurer->lock_wait_seconds(), 0.4);
}

// The interpreter-based property tests check the loop programs; this checks what the C++ code
// generator and the real compiler make of sampled programs: every sketch of several operator
// kinds, annotated with a few seeds, compiled and compared with the reference by the worker.
TEST_F(MeasurerTest, CompiledSampledProgramsMatchTheReference) {
  Program program = test::parse(R"(
kernel conv_bias_relu {
  X = input f32[1, 5, 9, 9]
  W = const f32[6, 5, 3, 3]
  b = const f32[6]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel conv_nhwc_prime {
  X = input f32[1, 17, 17, 16]
  W = const f32[3, 3, 16, 16]
  Y = conv2d_nhwc(X, W, pad = 1)
}
kernel depthwise {
  X = input f32[1, 4, 11, 11]
  W = const f32[4, 1, 3, 3]
  Y = depthwise_conv2d_nchw(X, W, stride = 2, pad = 1)
}
kernel ragged_dense {
  A = input f32[13, 21]
  W = const f32[17, 21]
  b = const f32[17]
  Y = relu(bias_add(dense(A, W), b))
}
kernel norm {
  A = input f32[32, 40]
  S[x:1] = sum(i:32, j:40, A[i, j] * A[i, j])
  N[x:1] = sqrt(S[x])
}
kernel softmax {
  X = input f32[6, 37]
  Y = softmax(X)
}
kernel layer_norm {
  X = input f32[5, 48]
  g = const f32[48]
  c = const f32[48]
  Y = layer_norm(X, g, c)
}
)");
  auto measurer = make_measurer(10);
  SamplerContext ctx;
  Annotator annotator(ctx);
  std::vector<Candidate> batch;
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    for (const Sketch& sketch : generate_sketches(dag, ctx, SketchRules::cpu())) {
      for (uint64_t seed = 0; seed < 3; ++seed) {
        std::mt19937_64 rng(seed);
        batch.push_back({kernel.name, annotator.annotate(sketch.state, rng), PlantedFault::None});
      }
    }
  }
  ASSERT_GE(batch.size(), 30u);
  std::vector<Record> records = measurer->measure(batch);
  ASSERT_EQ(records.size(), batch.size());
  for (size_t i = 0; i < records.size(); ++i)
    EXPECT_TRUE(records[i].ok()) << batch[i].kernel_name << ": " << measure_error_name(records[i].error) << " "
                                 << records[i].error_message << "\n"
                                 << describe_steps(batch[i].state);
}

// Prefetches and streaming stores change no result: an elementwise kernel with both, on rows
// whose starts are 64-byte aligned (every vector streamed) and on rows of 37 floats (most
// vectors not aligned: stored normally), and with vectors of 8 lanes (half a line each), is
// built, run on the runtime's threads and checked against the reference.
TEST_F(MeasurerTest, MemoryPragmasKeepTheResults) {
  auto measurer = make_measurer(10);
  std::vector<Candidate> batch;
  for (auto [cols, lanes] : {std::pair<int, int64_t>{256, 16}, {37, 16}, {256, 8}}) {
    const std::string name = fmt::format("bg_{}_{}", cols, lanes);
    Program program = test::parse(fmt::format("kernel {} {{ X = input f32[64, {}]\n b = const f32[{}]\n Y = gelu(bias_add(X, b, axis = 1)) }}", name, cols, cols));
    auto dag = std::make_shared<const ComputeDAG>(program.kernels[0].dag);
    State s(dag);
    const int y = s.num_stages() - 1;
    s.apply(std::make_shared<ComputeInlineStep>(y - 1));
    s.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{lanes}));
    s.apply(std::make_shared<AnnotateStep>(y, 0, IterAnnotation::Parallel));
    s.apply(std::make_shared<AnnotateStep>(y, 2, IterAnnotation::Vectorize));
    s.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::PrefetchBytes, 512));
    s.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::StreamStores, 1));
    batch.push_back({name, s, PlantedFault::None});
  }
  for (const Candidate& c : batch) {
    std::vector<Record> records = measurer->measure({c});
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(records[0].ok()) << measure_error_name(records[0].error) << " " << records[0].error_message << "\n" << describe_steps(c.state);
  }
}

TEST_F(MeasurerTest, ACandidateFarSlowerThanTheBestStopsAfterOneTimedCall) {
  // A kernel of about a millisecond, timed for 0.2 s of calls unless it stops early.
  Program program = test::parse("kernel mm { A = input f32[256, 256]\n B = const f32[256, 256]\n C[i:256, j:256] = sum(k:256, A[i, k] * B[k, j]) }");
  auto dag = std::make_shared<const ComputeDAG>(program.kernels[0].dag);
  auto measurer = make_measurer(5, 0.2);
  Candidate candidate{"mm", tiled(dag), PlantedFault::None};
  Record full = measurer->measure({candidate})[0];
  double full_run = measurer->run_seconds();
  ASSERT_TRUE(full.ok()) << full.error_message;
  EXPECT_GE(full.repeats, 3);
  // Against a best time a million times faster than the kernel, one call is enough.
  Record stopped = measurer->measure({candidate}, full.seconds * 1e-6)[0];
  double stopped_run = measurer->run_seconds() - full_run;
  ASSERT_TRUE(stopped.ok()) << stopped.error_message;
  EXPECT_FALSE(result_rejection(stopped).has_value());
  EXPECT_EQ(stopped.repeats, 1);
  EXPECT_GT(stopped.seconds, 0);
  EXPECT_LT(stopped_run, 0.5 * full_run);
  std::cout << "timed for " << full_run << " s (" << full.repeats << " calls), stopped early after " << stopped_run << " s\n";
}

TEST_F(MeasurerTest, AHopelessCandidateWhoseCheckedCallTookLongIsNotCalledAgain) {
  // The naive program of a 512^3 matmul: over 0.1 s a call.
  Program program = test::parse("kernel mm { A = input f32[512, 512]\n B = const f32[512, 512]\n C[i:512, j:512] = sum(k:512, A[i, k] * B[k, j]) }");
  auto dag = std::make_shared<const ComputeDAG>(program.kernels[0].dag);
  auto measurer = make_measurer(30, 0.2);
  // The reference runs with the first measurement, which is timed in full.
  Record full = measurer->measure({{"mm", State(dag), PlantedFault::None}})[0];
  ASSERT_TRUE(full.ok()) << full.error_message;
  ASSERT_GT(full.seconds, 0.1) << "the naive program is too fast for this test";
  double before = measurer->run_seconds();
  Record stopped = measurer->measure({{"mm", State(dag), PlantedFault::None}}, 1e-6)[0];
  double run = measurer->run_seconds() - before;
  ASSERT_TRUE(stopped.ok()) << stopped.error_message;
  EXPECT_EQ(stopped.repeats, 1);
  // One call (the checked one) rather than two.
  EXPECT_LT(run, 1.6 * full.seconds) << "stopped after " << run << " s; a call takes " << full.seconds << " s";
}

TEST_F(MeasurerTest, EarlyStopComparesWithTheBestOfTheBatchAndCanBeDisabled) {
  // The naive program is several times slower than the tiled one measured before it in the
  // batch; no best time is given.
  Program program = test::parse("kernel mm { A = input f32[256, 256]\n B = const f32[256, 256]\n C[i:256, j:256] = sum(k:256, A[i, k] * B[k, j]) }");
  auto dag = std::make_shared<const ComputeDAG>(program.kernels[0].dag);
  std::vector<Candidate> batch = {{"mm", tiled(dag), PlantedFault::None}, {"mm", State(dag), PlantedFault::None}};
  for (double factor : {1.5, 0.0}) {
    auto measurer = make_measurer(5, 0.05, "", factor);
    std::vector<Record> records = measurer->measure(batch);
    ASSERT_TRUE(records[0].ok() && records[1].ok()) << records[0].error_message << records[1].error_message;
    ASSERT_GT(records[1].seconds, 1.5 * records[0].seconds) << "the naive program is not slow enough for this test";
    EXPECT_GE(records[0].repeats, 3);
    if (factor > 0) {
      EXPECT_EQ(records[1].repeats, 1);
    } else {
      EXPECT_GE(records[1].repeats, 3);
    }
  }
}

TEST_F(MeasurerTest, RepeatedMeasurementsOfOneKernel) {
  // A kernel of about a millisecond, timed as tuning times it (0.1 s of calls), ten times.
  Program program = test::parse("kernel mm { A = input f32[256, 256]\n B = const f32[256, 256]\n C[i:256, j:256] = sum(k:256, A[i, k] * B[k, j]) }");
  auto measurer = make_measurer(5, 0.1);
  std::vector<Candidate> batch(10, Candidate{"mm", tiled(std::make_shared<const ComputeDAG>(program.kernels[0].dag)), PlantedFault::None});
  std::vector<Record> records = measurer->measure(batch);
  double lo = 1e9, hi = 0;
  for (const Record& r : records) {
    ASSERT_TRUE(r.ok()) << r.error_message;
    lo = std::min(lo, r.seconds);
    hi = std::max(hi, r.seconds);
  }
  // Timing noise is reported, not asserted: the machine is shared.
  std::cout << "10 measurements of one kernel: median times from " << lo * 1e6 << " us to " << hi * 1e6 << " us (spread "
            << (hi - lo) / lo * 100 << " %)\n";
  EXPECT_GT(lo, 0);
}

TEST_F(MeasurerTest, AProgramMeasuredBeforeIsNeitherCompiledNorRunAgain) {
  auto measurer = make_measurer(5, 0.01, "", 10, true);
  // One program twice (the search reaches a program by several schedules), another program, and
  // a candidate that fails to compile.
  std::vector<Candidate> batch = {{"mm", tiled(), PlantedFault::None},
                                  {"mm", tiled(), PlantedFault::None},
                                  {"mm", State(dag_), PlantedFault::None},
                                  {"mm", tiled(), PlantedFault::CompileError}};
  std::vector<Record> records = measurer->measure(batch);
  ASSERT_TRUE(records[0].ok()) << records[0].error_message;
  EXPECT_EQ(records[1].seconds, records[0].seconds);
  EXPECT_EQ(records[1].repeats, records[0].repeats);
  EXPECT_FALSE(records[0].copied);
  EXPECT_TRUE(records[1].copied);
  EXPECT_TRUE(records[2].ok()) << records[2].error_message;
  EXPECT_EQ(records[3].error, MeasureError::CompileError);
  EXPECT_EQ(measurer->reused(), 1);
  // Built: the tiled program once, the naive one, and the reference (built on its own).
  EXPECT_EQ(measurer->built(), 3);
  // A later batch: the measured programs are reused, their failures too; the record carries
  // its own schedule.
  std::vector<Record> later = measurer->measure({{"mm", State(dag_), PlantedFault::None}, {"mm", tiled(), PlantedFault::CompileError}});
  EXPECT_EQ(later[0].seconds, records[2].seconds);
  EXPECT_EQ(later[1].error, MeasureError::CompileError);
  EXPECT_EQ(measurer->reused(), 3);
  EXPECT_EQ(measurer->built(), 3);
  EXPECT_EQ(replay(dag_, later[0].steps).signature(), State(dag_).signature());
}

TEST_F(MeasurerTest, NewProgramSaysWhichCandidatesWouldBeCopiesWithoutBuildingThem) {
  auto measurer = make_measurer(5, 0.01, "", 10, true);
  std::optional<std::string> tiled_program = measurer->new_program({"mm", tiled(), PlantedFault::None});
  std::optional<std::string> naive_program = measurer->new_program({"mm", State(dag_), PlantedFault::None});
  ASSERT_TRUE(tiled_program && naive_program);
  EXPECT_FALSE(tiled_program->empty());
  EXPECT_NE(*tiled_program, *naive_program);
  EXPECT_EQ(measurer->built(), 0);
  ASSERT_TRUE(measurer->measure({{"mm", tiled(), PlantedFault::None}})[0].ok());
  EXPECT_FALSE(measurer->new_program({"mm", tiled(), PlantedFault::None}).has_value());
  EXPECT_EQ(measurer->new_program({"mm", State(dag_), PlantedFault::None}), naive_program);
  // A confirmation measures again whatever was measured; a schedule that does not lower has no
  // identity to compare.
  Candidate again{"mm", tiled(), PlantedFault::None};
  again.remeasure = true;
  EXPECT_EQ(measurer->new_program(again), std::string());
  // Without reuse nothing is copied: every program is new, none is looked up.
  auto plain = make_measurer();
  ASSERT_TRUE(plain->measure({{"mm", tiled(), PlantedFault::None}})[0].ok());
  EXPECT_EQ(plain->new_program({"mm", tiled(), PlantedFault::None}), std::string());
}

TEST_F(MeasurerTest, AProgramThatRanPastATimeLimitIsMeasuredAgainInALaterBatch) {
  KernelCompiler compiler = make_kernel_compiler();
  MeasureOptions options;
  options.reuse_programs = true;
  options.worker_path = ANSOR_TEST_WORKER;
  options.lock_dir = dir_.string();
  options.build.runtime_include = default_runtime_include();
  options.build.work_dir = (dir_ / "work").string();
  options.build.timeout_seconds = 0.001;  // every compile runs past it
  Measurer measurer(compiler, detect_host(compiler), cpp_, options);
  // In its batch, the second candidate of the program shares the first one's outcome...
  std::vector<Record> records = measurer.measure({{"mm", tiled(), PlantedFault::None}, {"mm", tiled(), PlantedFault::None}});
  EXPECT_EQ(records[0].error, MeasureError::CompileTimeout);
  EXPECT_EQ(records[1].error, MeasureError::CompileTimeout);
  EXPECT_EQ(measurer.reused(), 1);
  // ... but a time limit may be the busy machine's doing: a later batch tries again.
  EXPECT_EQ(measurer.measure({{"mm", tiled(), PlantedFault::None}})[0].error, MeasureError::CompileTimeout);
  EXPECT_EQ(measurer.reused(), 1);
}

TEST_F(MeasurerTest, WithoutReuseEveryCandidateIsMeasured) {
  auto measurer = make_measurer();
  std::vector<Record> records = measurer->measure({{"mm", tiled(), PlantedFault::None}, {"mm", tiled(), PlantedFault::None}});
  ASSERT_TRUE(records[0].ok() && records[1].ok()) << records[0].error_message << records[1].error_message;
  EXPECT_EQ(measurer->reused(), 0);
  EXPECT_EQ(measurer->built(), 3);
}

}  // namespace
}  // namespace ansor
