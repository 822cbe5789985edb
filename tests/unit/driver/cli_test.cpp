// The ansor-gen command line through run_cli: exit statuses (0 success, 1 bad input, 2 misuse),
// error messages naming the place, and the files emit and configure write.
#include "driver/cli.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/compiler.h"
#include "measure/cpu_variant.h"
#include "measure/cuda_device.h"
#include "measure/host_target.h"
#include "target/target.h"
#include "records/cache.h"
#include "records/compiler_identity.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

// What builds for the target strings of these tests (cpu:x86_64:x86-64-v3:...), and so what
// their records are tuned with: a target string builds with the -march of its CPU field.
KernelCompiler v3_compiler() { return make_kernel_compiler("", flags_for_cpu(default_kernel_flags(), "x86-64-v3")); }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_cli_test");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  int run(std::vector<std::string> args) {
    args.insert(args.begin(), "ansor-gen");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    out_.str("");
    err_.str("");
    return run_cli(static_cast<int>(argv.size()), argv.data(), out_, err_);
  }

  fs::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(CliTest, CheckAcceptsAValidFile) {
  EXPECT_EQ(run({"check", write("k.def", test::kTwoKernelsDef)}), 0);
  EXPECT_NE(out_.str().find("2 kernels OK"), std::string::npos);
}

TEST_F(CliTest, CheckReportsTheFirstErrorWithItsPosition) {
  std::string def = write("bad.def", "kernel k {\n  A = input f32[4]\n  B[i:4] = Wt[i]\n}\n");
  EXPECT_EQ(run({"check", def}), 1);
  EXPECT_NE(err_.str().find("bad.def:3:12: error: unknown tensor 'Wt'"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("\n  B[i:4] = Wt[i]\n           ^"), std::string::npos) << err_.str();
}

TEST_F(CliTest, MissingFileIsBadInput) {
  EXPECT_EQ(run({"check", (dir_ / "missing.def").string()}), 1);
  EXPECT_NE(err_.str().find("cannot read"), std::string::npos);
}

TEST_F(CliTest, MisuseExitsWithTwo) {
  EXPECT_EQ(run({}), 2);
  EXPECT_EQ(run({"frobnicate"}), 2);
  EXPECT_EQ(run({"emit", write("k.def", test::kTwoKernelsDef)}), 2);  // --name and --out are required
  EXPECT_EQ(run({"emit", write("k.def", test::kTwoKernelsDef), "--name", "not-an-identifier", "--out", dir_.string()}), 2);
  EXPECT_EQ(run({"emit", write("k.def", test::kTwoKernelsDef), "--name", "lib", "--out", dir_.string(), "--schedule", "fastest"}), 2);
}

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const char* cmd : {"check", "list", "emit", "configure", "lower", "tune", "sketch", "features"}) {
    EXPECT_EQ(run({cmd, "--help"}), 0) << cmd;
    EXPECT_NE(out_.str().find("Usage"), std::string::npos) << cmd;
  }
}

TEST_F(CliTest, ListShowsShapesAndFlops) {
  ASSERT_EQ(run({"list", write("k.def", test::kTwoKernelsDef)}), 0);
  std::string s = out_.str();
  EXPECT_NE(s.find("inputs:   A f32[4, 6], B f32[6, 5]"), std::string::npos) << s;
  EXPECT_NE(s.find("outputs:  C f32[4, 5]"), std::string::npos) << s;
  EXPECT_NE(s.find("flops:    240"), std::string::npos) << s;
  ASSERT_EQ(run({"list", write("k.def", test::kTwoKernelsDef), "--json"}), 0);
  EXPECT_NE(out_.str().find("\"workload_key\""), std::string::npos);
}

TEST_F(CliTest, EmitWritesHeaderRegistryAndOneSourcePerKernel) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"emit", def, "--name", "mylib", "--out", out.string(), "--schedule", "naive"}), 0) << err_.str();
  EXPECT_TRUE(fs::exists(out / "mylib.h"));
  EXPECT_TRUE(fs::exists(out / "mylib_registry.cpp"));
  EXPECT_TRUE(fs::exists(out / "mylib_mm.cpp"));
  EXPECT_TRUE(fs::exists(out / "mylib_add1.cpp"));
  std::ifstream header(out / "mylib.h");
  std::string text((std::istreambuf_iterator<char>(header)), {});
  EXPECT_NE(text.find("int mylib_mm(const float* A, const float* B, float* C);"), std::string::npos) << text;
  EXPECT_NE(text.find("int mylib_add1(const int32_t* X, int32_t* Y);"), std::string::npos) << text;
}

TEST_F(CliTest, EmitLeavesUnchangedFilesAlone) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"emit", def, "--name", "mylib", "--out", out.string()}), 0);
  auto before = fs::last_write_time(out / "mylib_mm.cpp");
  fs::last_write_time(out / "mylib_mm.cpp", before - std::chrono::hours(1));
  auto aged = fs::last_write_time(out / "mylib_mm.cpp");
  ASSERT_EQ(run({"emit", def, "--name", "mylib", "--out", out.string()}), 0);
  EXPECT_EQ(fs::last_write_time(out / "mylib_mm.cpp"), aged);
}

TEST_F(CliTest, BadInputWritesNothing) {
  std::string def = write("k.def", std::string(test::kTwoKernelsDef) + "kernel broken { A = input f32[2]\n B = nope(A) }\n");
  fs::path out = dir_ / "out";
  EXPECT_EQ(run({"emit", def, "--name", "mylib", "--out", out.string()}), 1);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliTest, ConfigureWritesFragmentsAndTheKernelList) {
  std::string def = write("k.def", "let M = 4\n" + std::string(test::kTwoKernelsDef));
  fs::path out = dir_ / "cfg";
  ASSERT_EQ(run({"configure", def, "--name", "lib", "--out", out.string()}), 0) << err_.str();
  std::ifstream list(out / "lib_kernels.cmake");
  std::string text((std::istreambuf_iterator<char>(list)), {});
  EXPECT_NE(text.find("mm\n  add1)"), std::string::npos) << text;
  // A fragment is a valid kernels.def of its own.
  EXPECT_EQ(run({"check", (out / "defs" / "add1.def").string()}), 0) << err_.str();
}

TEST_F(CliTest, CudaTargetsEmitCudaSourcesAndBadTargetsAreRefusedBeforeAnythingIsWritten) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  fs::path out = dir_ / "out";
  EXPECT_EQ(run({"configure", def, "--name", "lib", "--out", out.string(), "--target", "cuda:sm_12"}), 1);
  EXPECT_NE(err_.str().find("unknown CUDA architecture; known: sm_75, sm_80"), std::string::npos) << err_.str();
  EXPECT_EQ(run({"configure", def, "--name", "lib", "--out", out.string(), "--target", "cpu:x86_64"}), 1);
  EXPECT_NE(err_.str().find("invalid target 'cpu:x86_64'"), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run({"configure", def, "--name", "lib", "--out", out.string(), "--target", "cpu:x86_64:skylake:avx2:t4"}), 0) << err_.str();

  ASSERT_EQ(run({"emit", def, "--name", "gpu", "--out", out.string(), "--schedule", "default", "--target", "cuda:sm_90"}), 0) << err_.str();
  std::ifstream header(out / "gpu.h");
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#include <cuda_runtime_api.h>"), std::string::npos) << text;
  EXPECT_NE(text.find("int gpu_mm_stream(const float* A, const float* B, float* C, cudaStream_t stream);"), std::string::npos) << text;
  EXPECT_NE(text.find("int gpu_mm_packed_stream(const float* A, const float* B, float* C, cudaStream_t stream);"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out / "gpu_mm.cu"));
  EXPECT_TRUE(fs::exists(out / "gpu_add1.cu"));

  // `cuda` is the device present: without one it names the architectures instead.
  std::string why;
  if (!probe_cuda_device(find_nvcc(), why)) {
    EXPECT_EQ(run({"emit", def, "--name", "any", "--out", (dir_ / "any").string(), "--schedule", "default", "--target", "cuda"}), 1);
    EXPECT_NE(err_.str().find("target 'cuda' is the CUDA device present, and there is none"), std::string::npos) << err_.str();
    EXPECT_FALSE(fs::exists(dir_ / "any"));
  }
}

TEST_F(CliTest, EmitFromACacheSkipsHostileAndBrokenRecords) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  fs::path cache = dir_ / "cache";
  fs::create_directories(cache);
  std::ofstream records(cache / "cpu-x86_64-x86-64-v3-avx2-t2.jsonl");
  records << "this is not json\n"
          << R"({"v":1,"workload":"x","dag":"","target":"cpu:x86_64:x86-64-v3:avx2:t2","compiler":"c","steps":[{"kind":"annotate","stage":1,"iter":0,"annotation":"}; system(\"rm -rf /\"); {"}],"result":"ok","seconds":1e-9})"
          << "\n{\"v\":1,\"workload\":\"torn";
  records.close();
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--kernel", "add1", "--target",
                 "cpu:x86_64:x86-64-v3:avx2:t2"}),
            0)
      << err_.str();
  EXPECT_NE(out_.str().find(":1: skipped"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":2: skipped: bad step: unknown annotation"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(":3: skipped: the line is incomplete"), std::string::npos) << out_.str();
  std::ifstream source(out / "lib_add1.cpp");
  std::string text((std::istreambuf_iterator<char>(source)), {});
  EXPECT_EQ(text.find("system("), std::string::npos);
  EXPECT_NE(text.find("schedule: default"), std::string::npos);
}

TEST_F(CliTest, TuneRefusesAnUnknownPolicyNamingTheKnownOnes) {
  fs::path cache = dir_ / "cache";
  EXPECT_EQ(run({"tune", write("k.def", test::kTwoKernelsDef), "--cache", cache.string(), "--policy", "annealing"}), 2);
  // Tests may register policies of their own: the list holds at least the built-in one.
  EXPECT_NE(err_.str().find("unknown search policy 'annealing'; the policies are: "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("random"), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(cache));
}

TEST_F(CliTest, TuneChecksKernelNamesBeforeTuningAny) {
  fs::path cache = dir_ / "cache";
  EXPECT_EQ(run({"tune", write("k.def", test::kTwoKernelsDef), "--cache", cache.string(), "--kernel", "add1", "--kernel", "nope", "--trials", "1"}), 2);
  EXPECT_NE(err_.str().find("no kernel named 'nope'"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str().find("[tune]"), std::string::npos) << out_.str();
  EXPECT_TRUE(!fs::exists(cache) || fs::is_empty(cache));
}

TEST_F(CliTest, TuneTakesItsShardFromTheOptionOrTheJobEngineAndSaysWhich) {
  const std::string def = write("four.def", std::string(test::kTwoKernelsDef) +
                                                "kernel big {\n  A = input f32[64, 64]\n  B = const f32[64, 64]\n  C = matmul(A, B)\n}\n"
                                                "kernel twice {\n  X = input f32[8]\n  Y[i:8] = X[i] * 2.0\n}\n");
  const std::string cache = (dir_ / "cache").string();
  // A GPU target: this machine cannot measure it, so the runs split and stop without measuring.
  const std::vector<std::string> tune = {"tune", def, "--cache", cache, "--target", "cuda:sm_90", "--total-trials", "40"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = tune;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  ASSERT_EQ(run(with({"--shard", "0/2"})), 0) << err_.str();
  EXPECT_NE(out_.str().find("[shard] 0/2 (--shard): 1 of 4 kernels, 10 of 40 trials"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("): big\n"), std::string::npos) << "the costliest kernel has a shard of its own: " << out_.str();

  ::setenv("SLURM_ARRAY_TASK_ID", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
  const int from_slurm = run(tune);
  const std::string slurm_out = out_.str();
  // With --kernel the engine's shard does not apply: the named kernel is tuned (and cannot be, here).
  EXPECT_EQ(run({"tune", def, "--cache", cache, "--target", "cuda:sm_90", "--kernel", "big"}), 1);
  EXPECT_EQ(out_.str().find("[shard]"), std::string::npos) << out_.str();
  EXPECT_EQ(err_.str().find("shard"), std::string::npos) << err_.str();
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  ASSERT_EQ(from_slurm, 0);
  EXPECT_NE(slurm_out.find("[shard] 1/2 (SLURM_ARRAY_TASK_ID=4, SLURM_ARRAY_TASK_MIN=3, SLURM_ARRAY_TASK_COUNT=2): 3 of 4 kernels, 30 of 40 trials"),
            std::string::npos)
      << slurm_out;

  ::setenv("JOB_COMPLETION_INDEX", "1", 1);
  EXPECT_EQ(run(tune), 2);
  ::unsetenv("JOB_COMPLETION_INDEX");
  EXPECT_NE(err_.str().find("JOB_COMPLETION_INDEX=1 (a Kubernetes Indexed Job) needs the shard count in ANSOR_SHARD_COUNT"), std::string::npos)
      << err_.str();
  EXPECT_EQ(run(with({"--shard", "2/2"})), 2);
  EXPECT_NE(err_.str().find("--shard: shard index 2 is not in 0..1"), std::string::npos) << err_.str();
  EXPECT_EQ(run({"tune", def, "--cache", cache, "--target", "cuda:sm_90", "--shard", "0/2", "--kernel", "big"}), 2);
  EXPECT_NE(err_.str().find("--shard is for a run without --kernel"), std::string::npos) << err_.str();
  EXPECT_TRUE(!fs::exists(cache) || fs::is_empty(cache));
}

TEST_F(CliTest, CacheKeyIsStableAndChangesWithTheWorkloadsAndTheTarget) {
  const std::string def = write("k.def", test::kTwoKernelsDef);
  const std::string target = "cpu:x86_64:x86-64-v3:avx2:t2";
  ASSERT_EQ(run({"cache", "key", def, "--target", target}), 0) << err_.str();
  const std::string key = out_.str();
  EXPECT_EQ(key.rfind("ansor-cpu-x86_64-x86-64-v3-avx2-t2-", 0), 0u) << key;
  ASSERT_EQ(run({"cache", "key", def, "--target", target}), 0);
  EXPECT_EQ(out_.str(), key);
  ASSERT_EQ(run({"cache", "key", def, "--target", "cpu:x86_64:x86-64-v3:avx2:t4"}), 0);
  EXPECT_NE(out_.str(), key);
  const std::string changed = write("changed.def", std::string(test::kTwoKernelsDef) + "kernel more {\n  X = input f32[8]\n  Y[i:8] = X[i] * 2.0\n}\n");
  ASSERT_EQ(run({"cache", "key", changed, "--target", target}), 0);
  EXPECT_NE(out_.str(), key);
  EXPECT_EQ(run({"cache", "merge", (dir_ / "out").string(), (dir_ / "missing").string()}), 1);
  EXPECT_NE(err_.str().find("is neither a cache directory nor a record file"), std::string::npos) << err_.str();
}

TEST_F(CliTest, AKernelsOwnGpuTargetInACpuLibraryIsRefusedBeforeAnythingIsWritten) {
  std::string def =
      write("k.def", std::string(test::kTwoKernelsDef) + "kernel g (target = \"cuda:sm_80\") {\n  X = input f32[4]\n  Y[i:4] = X[i] * 2.0\n}\n");
  fs::path out = dir_ / "out";
  EXPECT_EQ(run({"emit", def, "--name", "lib", "--out", out.string(), "--schedule", "naive"}), 1);
  const std::string why = "kernel 'g' targets cuda:sm_80, but the library is built for host: a library's kernels all run on a CPU or all on a CUDA GPU";
  EXPECT_NE(err_.str().find(why), std::string::npos) << err_.str();
  EXPECT_EQ(run({"configure", def, "--name", "lib", "--out", out.string()}), 1);
  EXPECT_NE(err_.str().find(why), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(out));
  // The other kernels, emitted alone, are unaffected.
  EXPECT_EQ(run({"emit", def, "--name", "lib", "--out", out.string(), "--schedule", "naive", "--kernel", "add1"}), 0) << err_.str();
}

TEST_F(CliTest, ScheduledTuningSeedsAKernelWithoutRecordsFromAnotherShapesRecords) {
  ::setenv("ANSOR_MEASURE_WORKER", ANSOR_TEST_WORKER, 1);
  std::string def = write("shapes.def",
                          "kernel wide {\n  X = input f32[64]\n  Y[i:64] = X[i] * 2.0\n}\n"
                          "kernel narrow {\n  X = input f32[24]\n  Y[i:24] = X[i] * 2.0\n}\n");
  const std::string cache = (dir_ / "cache").string();
  ASSERT_EQ(run({"tune", def, "--cache", cache, "--kernel", "wide", "--trials", "3", "--batch", "3", "--min-seconds", "0.001"}), 0)
      << err_.str() << out_.str();
  EXPECT_EQ(out_.str().find("seed the search"), std::string::npos) << out_.str();
  ASSERT_EQ(run({"tune", def, "--cache", cache, "--total-trials", "7", "--batch", "2", "--min-seconds", "0.001"}), 0) << err_.str() << out_.str();
  EXPECT_NE(out_.str().find("[tune] narrow: no record of its own; "), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("[tune] wide: no record of its own"), std::string::npos) << out_.str();
}

TEST_F(CliTest, TuneUsesAKernelsOwnTarget) {
  ::setenv("ANSOR_MEASURE_WORKER", ANSOR_TEST_WORKER, 1);
  std::string host = detect_host(make_kernel_compiler()).to_string();
  std::string def = write("own.def", "kernel own (target = \"" + host + "\") {\n  X = input f32[8]\n  Y[i:8] = X[i] + 1\n}\n");
  fs::path cache = dir_ / "cache";
  constexpr const char* kRunTarget = "cpu:x86_64:x86-64-v3:avx2:t1";
  ASSERT_EQ(run({"tune", def, "--cache", cache.string(), "--target", kRunTarget, "--trials", "2", "--batch", "2", "--min-seconds",
                 "0.001"}),
            0)
      << err_.str() << out_.str();
  EXPECT_NE(out_.str().find("[schedule] 1 kernel on " + host + ", 2 trials in all"), std::string::npos) << out_.str();
  TuningCache records(cache.string());
  TuningCache::Loaded loaded = records.load(host);
  ASSERT_EQ(loaded.records.size(), 2u);
  for (const Record& r : loaded.records) EXPECT_EQ(r.target, host);
  EXPECT_FALSE(fs::exists(records.file_for(kRunTarget)));
}

TEST_F(CliTest, EmitPassesOverARecordThatReplaysButDoesNotLower) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  constexpr const char* kTarget = "cpu:x86_64:x86-64-v3:avx2:t2";
  auto dag = test::dag_of(test::parse(test::kTwoKernelsDef), "add1");
  auto record = [&](double seconds, int64_t split) {
    Record r;
    r.workload_key = dag->workload_key();
    r.dag = dag->canonical_text();
    r.kernel = "add1";
    r.target = kTarget;
    r.compiler = v3_compiler().identity();
    r.steps = {std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{split})};
    r.seconds = seconds;
    r.repeats = 3;
    r.generator_version = "0.1.0";
    return r;
  };
  fs::path cache = dir_ / "cache";
  TuningCache(cache.string()).append(record(1e-3, 0));  // an undecided split length: replays, cannot lower
  TuningCache(cache.string()).append(record(2e-3, 3));
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--kernel", "add1", "--target", kTarget}), 0)
      << err_.str();
  EXPECT_NE(out_.str().find("add1: tuned record, 2.000 ms, measured by ansor-gen 0.1.0"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("a tuned record (1.000 ms) does not lower and is passed over"), std::string::npos) << out_.str();
  std::ifstream source(out / "lib_add1.cpp");
  std::string text((std::istreambuf_iterator<char>(source)), {});
  EXPECT_NE(text.find("schedule: tuned"), std::string::npos);
}

// A record of kernel add1 for `target`, splitting its loop by `split`, at `seconds`.
Record add1_record(const std::string& target, double seconds, int64_t split) {
  auto dag = test::dag_of(test::parse(test::kTwoKernelsDef), "add1");
  Record r = test::make_record(*dag, target, v3_compiler().identity(), seconds,
                               {std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{split})});
  r.kernel = "add1";
  return r;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST_F(CliTest, RecordsOfTheSameIsaTravelWithAWarningAndTheExactTargetWins) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  constexpr const char* kHere = "cpu:x86_64:x86-64-v3:avx2:t2";
  fs::path cache = dir_ / "cache";
  TuningCache records(cache.string());
  records.append(add1_record("cpu:x86_64:othercpu:avx2:t8", 1e-3, 3));  // same ISA, another CPU and thread count
  records.append(add1_record("cpu:x86_64:x86-64-v3:avx2:t4", 2e-3, 1));   // same CPU, another thread count: more alike
  records.append(add1_record("cpu:x86_64:x86-64-v3:avx512:t2", 1e-4, 3)); // another ISA: never
  fs::path out = dir_ / "out";
  auto emit = [&] {
    return run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--kernel", "add1", "--target", kHere});
  };
  ASSERT_EQ(emit(), 0) << err_.str();
  EXPECT_NE(out_.str().find("add1: tuned record, 2.000 ms\n  warning: no record of 'add1' for cpu:x86_64:x86-64-v3:avx2:t2: replaying those "
                            "tuned for cpu:x86_64:x86-64-v3:avx2:t4 (same ISA)"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(read_text(out / "lib_add1.cpp").find("split(Y, i, [1])"), std::string::npos);
  // A record of the exact target wins over faster ones of other machines, without a warning.
  records.append(add1_record(kHere, 5e-3, 3));
  ASSERT_EQ(emit(), 0) << err_.str();
  EXPECT_NE(out_.str().find("add1: tuned record, 5.000 ms"), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("warning"), std::string::npos) << out_.str();
  EXPECT_EQ(records.targets(), (std::vector<std::string>{"cpu:x86_64:othercpu:avx2:t8", kHere, "cpu:x86_64:x86-64-v3:avx2:t4",
                                                          "cpu:x86_64:x86-64-v3:avx512:t2"}));
}

TEST_F(CliTest, RecordsOfTheSameCompilerMajorVersionOrFlagOrderReplayWithOneLine) {
  const KernelCompiler here = v3_compiler();
  const CompilerIdentity id = parse_compiler_identity(here.identity());
  if (id.family.empty()) GTEST_SKIP() << "an unrecognised kernel compiler: " << here.version;
  // The same compiler with another version (clang 14.0.6 → 14.99.0 or 15.99.0).
  auto version = [&](int major) {
    std::string line = id.version_line;
    line.replace(line.find(id.version), id.version.size(), fmt::format("{}.99.0", major));
    return compiler_identity_text(line, here.flags);
  };
  std::vector<std::string> reversed(here.flags.rbegin(), here.flags.rend());
  std::string def = write("k.def", test::kTwoKernelsDef);
  constexpr const char* kHere = "cpu:x86_64:x86-64-v3:avx2:t2";
  fs::path cache = dir_ / "cache", out = dir_ / "out";
  auto add1 = [&](const std::string& compiler, double seconds, int64_t split) {
    Record r = add1_record(kHere, seconds, split);
    r.compiler = compiler;
    TuningCache(cache.string()).append(r);
  };
  auto emit = [&] {
    return run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--kernel", "add1", "--target", kHere});
  };
  add1(version(id.major + 1), 1e-3, 3);
  ASSERT_EQ(emit(), 0) << err_.str();
  EXPECT_NE(out_.str().find("add1: no tuned record: default schedule"), std::string::npos) << "another major version does not replay\n" << out_.str();
  add1(version(id.major), 2e-3, 3);
  ASSERT_EQ(emit(), 0) << err_.str();
  const std::string note = fmt::format("note: 'add1': records of {} {}.99.0 replayed under {} (same major version)\n", id.family, id.major,
                                       id.short_name());
  EXPECT_NE(out_.str().find("add1: tuned record, 2.000 ms\n  " + note), std::string::npos) << out_.str();
  // Tuned with the flags in another order: the same code, preferred to another minor version.
  add1(compiler_identity_text(here.version, reversed), 3e-3, 1);
  ASSERT_EQ(emit(), 0) << err_.str();
  EXPECT_NE(out_.str().find("add1: tuned record, 3.000 ms\n  note: 'add1': records tuned with the same flags in another order\n"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(read_text(out / "lib_add1.cpp").find("split(Y, i, [1])"), std::string::npos);
}

TEST_F(CliTest, TrialsTunedWithOneFlagOrderCountForAnother) {
  ::setenv("ANSOR_MEASURE_WORKER", ANSOR_TEST_WORKER, 1);
  std::string def = write("add1.def", "kernel add1 {\n  X = input i32[3]\n  Y[i:3] = X[i] + 1\n}\n");
  const std::vector<std::string> flags = default_kernel_flags();
  const std::string cache = (dir_ / "cache").string();
  auto tune = [&](const std::vector<std::string>& f) {
    std::string text;
    for (const std::string& x : f) text += (text.empty() ? "" : " ") + x;
    return run({"tune", def, "--cache", cache, "--trials", "2", "--batch", "2", "--min-seconds", "0.001", "--flags", text});
  };
  ASSERT_EQ(tune(flags), 0) << err_.str() << out_.str();
  EXPECT_NE(out_.str().find("2 trials in all (0 in the cache, 2 to go)"), std::string::npos) << out_.str();
  ASSERT_EQ(tune(std::vector<std::string>(flags.rbegin(), flags.rend())), 0) << err_.str() << out_.str();
  EXPECT_NE(out_.str().find("2 trials in all (2 in the cache, 0 to go)"), std::string::npos) << out_.str();
}

TEST_F(CliTest, StampsChangeOnlyWhenTheRecordsEmitWouldTryChange) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  constexpr const char* kHere = "cpu:x86_64:x86-64-v3:avx2:t2";
  fs::path cache = dir_ / "cache", out = dir_ / "out";
  auto stamps = [&] {
    return run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--target", kHere, "--stamps-only",
                "--trials", "0", "--tune-hint", "make tune"});
  };
  ASSERT_EQ(stamps(), 0) << err_.str();
  EXPECT_NE(out_.str().find("warning: 2 kernels of lib without a tuning record use the default schedule (mm, add1); tune them with: make tune"),
            std::string::npos)
      << out_.str();
  EXPECT_FALSE(fs::exists(out / "lib_add1.cpp")) << "stamps only";
  std::string before = read_text(out / "stamps" / "lib_add1.stamp");
  auto mtime = fs::last_write_time(out / "stamps" / "lib_add1.stamp");
  ASSERT_EQ(stamps(), 0) << err_.str();
  EXPECT_EQ(fs::last_write_time(out / "stamps" / "lib_add1.stamp"), mtime) << "an unchanged stamp is not rewritten";
  TuningCache(cache.string()).append(add1_record(kHere, 1e-3, 3));
  ASSERT_EQ(stamps(), 0) << err_.str();
  EXPECT_NE(out_.str().find("add1: its records changed"), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("mm: its records changed"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("1 kernel of lib without a tuning record uses the default schedule (mm); tune it with"), std::string::npos)
      << out_.str();
  std::string after = read_text(out / "stamps" / "lib_add1.stamp");
  EXPECT_NE(after, before);
  EXPECT_NE(after.find("split(Y, i, [3])"), std::string::npos) << after;
  // A slower record of the same kernel changes what emit would try after the best: a new stamp;
  // re-measuring the same schedule does not.
  TuningCache(cache.string()).append(add1_record(kHere, 2e-3, 3));
  ASSERT_EQ(stamps(), 0) << err_.str();
  EXPECT_EQ(read_text(out / "stamps" / "lib_add1.stamp"), after);
  // Emitting a kernel writes the stamp of the records it used.
  fs::remove(out / "stamps" / "lib_add1.stamp");
  ASSERT_EQ(run({"emit", def, "--name", "lib", "--out", out.string(), "--cache", cache.string(), "--target", kHere, "--kernel", "add1"}), 0)
      << err_.str();
  EXPECT_EQ(read_text(out / "stamps" / "lib_add1.stamp"), after);
}

TEST_F(CliTest, LowerPrintsTheLoopProgram) {
  ASSERT_EQ(run({"lower", write("k.def", test::kTwoKernelsDef), "--kernel", "add1"}), 0);
  EXPECT_NE(out_.str().find("for i in 0..3:"), std::string::npos) << out_.str();
  EXPECT_EQ(run({"lower", write("k.def", test::kTwoKernelsDef), "--kernel", "nope"}), 2);
}

// The printing commands show, for `host`, the programs of the target a build detects here (its
// vector ISA and tensor features), not those of a generic CPU: a bf16 product's sketches are the
// ones a tuning run on this machine samples.
TEST_F(CliTest, PrintingCommandsShowTheHostsOwnPrograms) {
  const std::string def = write("k.def", R"(kernel d {
  X = input bf16[8, 32]
  W = const bf16[32, 32]
  Y[i:8, j:32] = sum(k:32, f32(X[i, k]) * f32(W[j, k]))
})");
  const std::string here = detect_host(make_kernel_compiler()).to_string();
  for (const char* command : {"sketch", "lower"}) {
    std::vector<std::string> args = {command, def, "--kernel", "d"};
    if (std::string(command) == "lower") args.insert(args.end(), {"--schedule", "default"});
    ASSERT_EQ(run(args), 0) << err_.str();
    const std::string host = out_.str();
    args.insert(args.end(), {"--target", here});
    ASSERT_EQ(run(args), 0) << err_.str();
    EXPECT_EQ(host, out_.str()) << command;
  }
}

TEST_F(CliTest, FeaturesPrintEveryFeatureOfEachStoreByName) {
  std::string def = write("k.def", test::kTwoKernelsDef);
  ASSERT_EQ(run({"features", def, "--kernel", "add1", "--raw"}), 0) << err_.str();
  std::string raw = out_.str();
  // Y[i] = X[i] + 1 for i < 3: one store, 3 integer additions in 1 loop; one line per feature.
  EXPECT_EQ(raw.rfind("store 0: Y\n", 0), 0u) << raw;
  EXPECT_EQ(std::count(raw.begin(), raw.end(), '\n'), 1 + 171) << raw;
  EXPECT_NE(raw.find(fmt::format("  {:<44} 3\n", "int_addsub")), std::string::npos) << raw;
  EXPECT_NE(raw.find(fmt::format("  {:<44} 1\n", "num_loops")), std::string::npos) << raw;
  // Scaled: log2(1 + 3) = 2, log2(1 + 1) = 1.
  ASSERT_EQ(run({"features", def, "--kernel", "add1"}), 0) << err_.str();
  EXPECT_NE(out_.str().find(fmt::format("  {:<44} 2\n", "int_addsub")), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(fmt::format("  {:<44} 1\n", "num_loops")), std::string::npos) << out_.str();
  EXPECT_EQ(run({"features", def, "--kernel", "nope"}), 2);
  EXPECT_EQ(run({"features", def, "--kernel", "add1", "--cache-line", "0"}), 2);
}

}  // namespace
}  // namespace ansor
