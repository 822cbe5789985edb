// Pooling records: merge keeps every readable record once (damaged inputs, repeated inputs, a
// tuner appending meanwhile), distill keeps what a build chooses among, stats count per target.
#include "records/record_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "records/cache.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOtherTarget = "cpu:x86_64:othercpu:avx512:t2";

class RecordPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_record_pool_test");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    dag_ = test::dag_of(test::parse("kernel k { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "k");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Schedule n of 30 distinct ones: i split by one factor, j by another.
  static std::vector<StepPtr> schedule(int n) {
    static const int64_t i_factors[] = {1, 2, 4, 8, 16}, j_factors[] = {1, 2, 3, 4, 6, 12};
    return {std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{i_factors[n % 5]}),
            std::make_shared<SplitStep>(2, 2, std::vector<int64_t>{j_factors[n / 5 % 6]})};
  }
  Record record(double seconds, int schedule_number, int64_t timestamp, const std::string& target = test::kRecordTarget) const {
    Record r = test::make_record(*dag_, target, test::kRecordCompiler, seconds, schedule(schedule_number));
    r.timestamp = timestamp;
    r.generator_version = "9.9.9";
    return r;
  }
  std::string cache_dir(const std::string& name) const { return (dir_ / name).string(); }
  static std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  static std::multiset<std::string> normalised(const std::vector<Record>& records) {
    std::multiset<std::string> out;
    for (const Record& r : records) out.insert(record_to_line(r));
    return out;
  }

  fs::path dir_;
  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(RecordPoolTest, MergeIsTheUnionOfTheInputsWithEachRecordOnce) {
  TuningCache a(cache_dir("a")), b(cache_dir("b")), out(cache_dir("out"));
  a.append(record(2e-3, 0, 1));
  a.append(record(1e-3, 1, 2));
  b.append(record(1e-3, 1, 2));  // the same record in both shards
  b.append(record(3e-3, 2, 3, kOtherTarget));
  out.append(record(5e-3, 3, 0));  // the output's own record stays first

  MergeReport report = merge_records(out.dir(), {a.dir(), b.dir(), a.file_for(test::kRecordTarget)});
  EXPECT_EQ(report.read, 6u);
  EXPECT_EQ(report.added, 3u);
  EXPECT_EQ(report.duplicates, 3u) << "b's copy of a's record, and a's file named again";
  EXPECT_TRUE(report.skipped.empty());
  std::vector<Record> mine = TuningCache(out.dir()).load(test::kRecordTarget).records;
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].seconds, 5e-3);
  EXPECT_EQ(TuningCache(out.dir()).load(kOtherTarget).records.size(), 1u);

  MergeReport again = merge_records(out.dir(), {a.dir(), b.dir()});
  EXPECT_EQ(again.added, 0u) << "merging the same inputs again adds nothing";
  EXPECT_EQ(lines_of(out.file_for(test::kRecordTarget)).size(), 3u);
}

TEST_F(RecordPoolTest, MergeKeepsEveryGoodRecordOfADamagedInputAndReportsTheBadLines) {
  TuningCache shard(cache_dir("shard"));
  for (int n = 0; n < 4; ++n) shard.append(record(1e-3 * (n + 1), n, n));
  const std::string file = shard.file_for(test::kRecordTarget);
  std::vector<std::string> lines = lines_of(file);
  {
    std::ofstream rewrite(file, std::ios::trunc);
    rewrite << lines[0] << "\n" << lines[1] << "\n{\"version\": 1, \"garbage\"\n" << lines[2] << "\n" << lines[3] << "\n"
            << lines[3].substr(0, lines[3].size() / 2);  // a tuner killed mid-line
  }
  MergeReport report = merge_records(cache_dir("out"), {shard.dir()});
  EXPECT_EQ(report.added, 4u);
  ASSERT_EQ(report.skipped.size(), 2u);
  EXPECT_NE(report.skipped[0].find(file + ":3: skipped"), std::string::npos) << report.skipped[0];
  EXPECT_NE(report.skipped[1].find(file + ":6: skipped: the line is incomplete"), std::string::npos) << report.skipped[1];
  EXPECT_EQ(TuningCache(cache_dir("out")).load(test::kRecordTarget).records.size(), 4u);
}

TEST_F(RecordPoolTest, MergeRefusesAMissingInput) {
  EXPECT_THROW(merge_records(cache_dir("out"), {cache_dir("no-such-cache")}), std::runtime_error);
  EXPECT_FALSE(fs::exists(cache_dir("out")));
}

TEST_F(RecordPoolTest, MergingWhileATunerAppendsLosesNothing) {
  TuningCache shard(cache_dir("shard"));
  for (int n = 0; n < 30; ++n) shard.append(record(1e-3, n, 1000 + n));
  const std::string out_dir = cache_dir("out");
  constexpr int kAppends = 300;
  pid_t tuner = ::fork();
  ASSERT_GE(tuner, 0);
  if (tuner == 0) {
    TuningCache out(out_dir);
    for (int n = 0; n < kAppends; ++n) out.append(record(2e-3, n % 30, 5000 + n));
    ::_exit(0);
  }
  for (int round = 0; round < 20; ++round) {
    // A record of the shard changes each round, so that every merge rewrites the file.
    TuningCache(shard.dir()).append(record(3e-3, round % 30, 9000 + round));
    merge_records(out_dir, {shard.dir()});
  }
  int status = 0;
  ASSERT_EQ(::waitpid(tuner, &status, 0), tuner);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  merge_records(out_dir, {shard.dir()});
  TuningCache::Loaded merged = TuningCache(out_dir).load(test::kRecordTarget);
  EXPECT_TRUE(merged.warnings.empty());
  EXPECT_EQ(merged.records.size(), static_cast<size_t>(kAppends + 30 + 20)) << "every append and every shard record";
  std::set<int64_t> appended;
  for (const Record& r : merged.records)
    if (r.timestamp >= 5000 && r.timestamp < 9000) appended.insert(r.timestamp);
  EXPECT_EQ(appended.size(), static_cast<size_t>(kAppends));
}

TEST_F(RecordPoolTest, DistillKeepsTheRecordsABuildChoosesAmongAndASpreadForTheCostModel) {
  TuningCache cache(cache_dir("cache"));
  // 30 schedules at distinct times; schedule 7 measured three times (its median counts);
  // schedule 0 failed once more; a record that does not replay.
  for (int n = 0; n < 30; ++n) cache.append(record(1e-3 * (30 - n), n, n));
  cache.append(record(1e-5, 7, 100));
  cache.append(record(1e-5, 7, 101));
  Record failed = record(1e-3, 0, 102);
  failed.error = MeasureError::Crash;
  failed.seconds = 0;
  cache.append(failed);
  Record unreplayable = record(1e-7, 3, 103);
  unreplayable.steps = {std::make_shared<SplitStep>(9, 0, std::vector<int64_t>{2})};
  cache.append(unreplayable);

  const RecordScope scope{dag_, test::kRecordTarget, test::kRecordCompiler};
  std::vector<std::string> warnings;
  std::vector<ReplayedRecord> before = best_records(TuningCache(cache.dir()).load(test::kRecordTarget).records, scope, kBestRecordsTried, warnings);

  DistillReport report = distill_records(cache.dir(), cache_dir("distilled"), DistillOptions{4, 3});
  ASSERT_EQ(report.files.size(), 1u);
  const DistilledFile& f = report.files[0];
  EXPECT_EQ(f.records_before, 34u);
  EXPECT_EQ(f.records_after, 4u + 2u + 3u) << "4 schedules (one with 3 measurements) and 3 for the cost model";
  EXPECT_LT(f.bytes_after, f.bytes_before);
  EXPECT_EQ(f.workloads, 1u);
  EXPECT_EQ(report.skipped.size(), 1u) << "the record that does not replay";

  std::vector<Record> kept = TuningCache(cache_dir("distilled")).load(test::kRecordTarget).records;
  std::vector<ReplayedRecord> after = best_records(kept, scope, kBestRecordsTried, warnings);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(record_to_line(after[i].record), record_to_line(before[i].record)) << i;
  }
  for (const Record& r : kept) EXPECT_TRUE(r.ok()) << "failed records go";
  // The spread: the slowest usable schedule is among them.
  EXPECT_TRUE(std::any_of(kept.begin(), kept.end(), [](const Record& r) { return r.seconds == 30e-3; }));
  EXPECT_EQ(TuningCache(cache.dir()).load(test::kRecordTarget).records.size(), 34u) << "--out leaves the cache as it was";

  DistillReport in_place = distill_records(cache.dir(), "", DistillOptions{4, 3});
  EXPECT_EQ(normalised(TuningCache(cache.dir()).load(test::kRecordTarget).records), normalised(kept));
  EXPECT_EQ(in_place.files.at(0).file, cache.file_for(test::kRecordTarget));
}

TEST_F(RecordPoolTest, StatsCountTrialsAndTheBestTimePerTargetAndKernel) {
  TuningCache cache(cache_dir("cache"));
  cache.append(record(4e-3, 0, 1));
  cache.append(record(2e-3, 1, 2));
  Record confirmation = record(3e-3, 1, 3);
  confirmation.remeasure = true;
  cache.append(confirmation);
  Record failed = record(0, 2, 4);
  failed.error = MeasureError::CompileError;
  cache.append(failed);
  cache.append(record(1e-3, 0, 5, kOtherTarget));

  std::vector<TargetStats> stats = cache_stats({cache.dir()});
  ASSERT_EQ(stats.size(), 2u);
  const TargetStats& mine = stats[1].target == test::kRecordTarget ? stats[1] : stats[0];
  EXPECT_EQ(mine.trials, 3u);
  EXPECT_EQ(mine.failed, 1u);
  ASSERT_EQ(mine.workloads.size(), 1u);
  const WorkloadStats& w = mine.workloads[0];
  EXPECT_EQ(w.kernel, "k");
  EXPECT_EQ(w.remeasures, 1u);
  ASSERT_TRUE(w.best_seconds.has_value());
  EXPECT_DOUBLE_EQ(*w.best_seconds, 2.5e-3) << "schedule 1's median";
  EXPECT_DOUBLE_EQ(w.flops, dag_->flop_count());
  EXPECT_EQ(w.versions, std::set<std::string>{"9.9.9"});
}

}  // namespace
}  // namespace ansor
