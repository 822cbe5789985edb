// The tuning cache: whole-line appends that survive kill -9 and concurrent writers, reads that
// skip torn, garbage, foreign and hostile lines with a warning naming file and line.
#include "records/cache.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "lang/program.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_cache_test");
    fs::remove_all(dir_);
    dag_ = test::dag_of(test::parse("kernel k { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "k");
  }
  void TearDown() override { fs::remove_all(dir_); }

  Record record(double seconds, std::vector<StepPtr> steps = {}) const {
    return test::make_record(*dag_, test::kRecordTarget, test::kRecordCompiler, seconds, std::move(steps));
  }

  std::string file() const { return TuningCache(dir_.string()).file_for(test::kRecordTarget); }

  void append_raw(const std::string& text) const {
    fs::create_directories(dir_);
    std::ofstream(file(), std::ios::app) << text;
  }

  fs::path dir_;
  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(CacheTest, AppendsAndLoadsRecordsPerTarget) {
  TuningCache cache(dir_.string());
  cache.append(record(2e-3));
  cache.append(record(1e-3));
  Record other = record(5e-3);
  other.target = "cpu:x86_64:othercpu:avx2:t2";
  cache.append(other);
  TuningCache::Loaded loaded = cache.load(test::kRecordTarget);
  EXPECT_EQ(loaded.records.size(), 2u);
  EXPECT_TRUE(loaded.warnings.empty());
  EXPECT_EQ(cache.load(other.target).records.size(), 1u);
  EXPECT_TRUE(cache.load("cpu:x86_64:nothing:avx2:t1").records.empty());
}

TEST_F(CacheTest, SkipsBadLinesWithWarningsAndKeepsTheRest) {
  TuningCache cache(dir_.string());
  cache.append(record(3e-3));
  append_raw("garbage that is not json\n");
  append_raw("{\"v\": 7, \"workload\": \"x\"}\n");  // a future format version
  append_raw("\n");
  cache.append(record(2e-3));
  append_raw("{\"v\": 1, \"workload\": \"torn");  // a writer killed mid-line
  cache.append(record(1e-3));                    // closes the torn line first
  TuningCache::Loaded loaded = cache.load(test::kRecordTarget);
  ASSERT_EQ(loaded.records.size(), 3u);
  ASSERT_EQ(loaded.warnings.size(), 3u) << ::testing::PrintToString(loaded.warnings);
  EXPECT_NE(loaded.warnings[0].find(file() + ":2: skipped"), std::string::npos) << loaded.warnings[0];
  EXPECT_NE(loaded.warnings[1].find(":3: skipped: unknown record format version 7"), std::string::npos) << loaded.warnings[1];
  EXPECT_NE(loaded.warnings[2].find(":6: skipped"), std::string::npos) << loaded.warnings[2];
}

TEST_F(CacheTest, ATornLastLineIsSkippedNotFatal) {
  TuningCache cache(dir_.string());
  cache.append(record(3e-3));
  append_raw(record_to_line(record(1e-3)).substr(0, 40));
  TuningCache::Loaded loaded = cache.load(test::kRecordTarget);
  EXPECT_EQ(loaded.records.size(), 1u);
  ASSERT_EQ(loaded.warnings.size(), 1u);
  EXPECT_NE(loaded.warnings[0].find("incomplete"), std::string::npos);
}

TEST_F(CacheTest, ConcurrentWritersNeverInterleave) {
  constexpr int kWriters = 4, kEach = 150;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      TuningCache cache(dir_.string());
      // Long steps lists make lines long enough that unlocked writes would interleave.
      std::vector<StepPtr> steps(40, std::make_shared<ReorderStep>(2, std::vector<int>{0, 1, 2}));
      for (int i = 0; i < kEach; ++i) cache.append(record(1e-3 * (w + 1), steps));
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  TuningCache::Loaded loaded = TuningCache(dir_.string()).load(test::kRecordTarget);
  EXPECT_EQ(loaded.records.size(), static_cast<size_t>(kWriters * kEach));
  EXPECT_TRUE(loaded.warnings.empty()) << loaded.warnings.front();
}

TEST_F(CacheTest, KillNineDuringAppendsLosesNothingFinished) {
  std::mt19937 rng(5);
  size_t finished_before_last_kill = 0;
  for (int round = 0; round < 12; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      TuningCache cache(dir_.string());
      std::vector<StepPtr> steps(60, std::make_shared<ReorderStep>(2, std::vector<int>{0, 1, 2}));
      for (;;) {
        cache.append(record(1e-3, steps));
        char c = 1;
        if (::write(fds[1], &c, 1) != 1) ::_exit(1);  // one byte per finished append
      }
    }
    ::close(fds[1]);
    ::usleep(std::uniform_int_distribution<int>(1000, 20000)(rng));
    ::kill(pid, SIGKILL);
    int status;
    ::waitpid(pid, &status, 0);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) finished_before_last_kill += static_cast<size_t>(n);
    ::close(fds[0]);
  }
  TuningCache::Loaded loaded = TuningCache(dir_.string()).load(test::kRecordTarget);
  // Every append that returned is there; at most one torn line per kill is skipped.
  EXPECT_GE(loaded.records.size(), finished_before_last_kill);
  EXPECT_LE(loaded.warnings.size(), 12u);
  for (const std::string& w : loaded.warnings) EXPECT_NE(w.find("skipped"), std::string::npos);
}

TEST_F(CacheTest, AFileIsReadOncePerRunAndTheRunsOwnAppendsAreKept) {
  TuningCache cache(dir_.string());
  cache.append(record(3e-3));
  TuningCache copy = cache;  // the tuner's, the cost model's: one set of records
  ASSERT_EQ(cache.load(test::kRecordTarget).records.size(), 1u);
  // Another process appends: this run goes on with the records it read; the next run sees it.
  TuningCache(dir_.string()).append(record(2e-3));
  EXPECT_EQ(copy.load(test::kRecordTarget).records.size(), 1u);
  EXPECT_EQ(TuningCache(dir_.string()).load(test::kRecordTarget).records.size(), 2u);
  // The run's own appends are seen by every copy.
  copy.append(record(1e-3));
  EXPECT_EQ(cache.load(test::kRecordTarget).records.size(), 2u);
  EXPECT_DOUBLE_EQ(cache.load(test::kRecordTarget).records.back().seconds, 1e-3);
  Record other_workload = record(1e-3);
  other_workload.workload_key = "ffffffffffffffffffffffffffffffff";
  cache.append(other_workload);
  EXPECT_EQ(cache.load(test::kRecordTarget, dag_->workload_key()).size(), 2u);
  EXPECT_EQ(cache.load(test::kRecordTarget, other_workload.workload_key).size(), 1u);
  // A new target's first record lists it.
  EXPECT_EQ(cache.targets(), std::vector<std::string>{test::kRecordTarget});
  Record other_target = record(1e-3);
  other_target.target = "cpu:x86_64:othercpu:avx2:t2";
  copy.append(other_target);
  EXPECT_EQ(cache.targets(), (std::vector<std::string>{"cpu:x86_64:othercpu:avx2:t2", test::kRecordTarget}));
}

}  // namespace
}  // namespace ansor
