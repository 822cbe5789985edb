// The record filter: each reason a record is not a usable record of a task, the replayed state
// of records that belong to the task (failed ones too, for the tuner's set of tried schedules),
// and the k-best query that the emitter uses.
#include "records/record_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

class RecordFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dag_ = test::dag_of(test::parse("kernel k { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "k");
    scope_ = {dag_, test::kRecordTarget, test::kRecordCompiler};
  }

  Record record(double seconds, std::vector<StepPtr> steps = {}) const {
    return test::make_record(*dag_, test::kRecordTarget, test::kRecordCompiler, seconds, std::move(steps));
  }

  static StepPtr split_i() { return std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{4}); }

  std::optional<RecordRejection> rejection_of(const Record& r) const { return check_record(r, scope_).rejection; }

  std::shared_ptr<const ComputeDAG> dag_;
  RecordScope scope_;
};

TEST_F(RecordFilterTest, AUsableRecordReplaysIntoItsState) {
  RecordCheck check = check_record(record(1e-3, {split_i()}), scope_);
  EXPECT_TRUE(check.usable());
  ASSERT_TRUE(check.state.has_value());
  EXPECT_EQ(check.state->stage(2).leaves.size(), 4u);  // i split in two
}

TEST_F(RecordFilterTest, EachRejectionReason) {
  Record other_workload = record(1e-3);
  other_workload.workload_key = "ffffffffffffffffffffffffffffffff";
  EXPECT_EQ(rejection_of(other_workload), RecordRejection::OtherWorkload);

  Record other_dag = record(1e-3);  // a hash collision, or a hand-edited line
  other_dag.dag += " ";
  EXPECT_EQ(rejection_of(other_dag), RecordRejection::OtherDag);

  Record other_target = record(1e-3);
  other_target.target = "cpu:x86_64:othercpu:avx2:t2";
  EXPECT_EQ(rejection_of(other_target), RecordRejection::OtherTarget);

  Record other_compiler = record(1e-3);
  other_compiler.compiler = "g++ (test) -O2";
  EXPECT_EQ(rejection_of(other_compiler), RecordRejection::OtherCompiler);

  RecordCheck no_replay = check_record(record(1e-3, {std::make_shared<SplitStep>(9, 0, std::vector<int64_t>{2})}), scope_);
  EXPECT_EQ(no_replay.rejection, RecordRejection::DoesNotReplay);
  EXPECT_FALSE(no_replay.state.has_value());
  EXPECT_FALSE(no_replay.detail.empty());

  Record failed = record(1e-3, {split_i()});
  failed.error = MeasureError::Crash;
  RecordCheck failed_check = check_record(failed, scope_);
  EXPECT_EQ(failed_check.rejection, RecordRejection::Failed);
  EXPECT_TRUE(failed_check.state.has_value()) << "a failed schedule was still tried";

  for (double seconds : {0.0, -1e-3, std::numeric_limits<double>::infinity(), std::nan("")})
    EXPECT_EQ(rejection_of(record(seconds)), RecordRejection::NoTime) << seconds;
  EXPECT_EQ(result_rejection(record(0.0)), RecordRejection::NoTime);
  EXPECT_FALSE(result_rejection(record(1e-3)).has_value());
}

TEST_F(RecordFilterTest, IdentityIsCheckedBeforeReplaying) {
  Record foreign = record(1e-3, {std::make_shared<SplitStep>(9, 0, std::vector<int64_t>{2})});
  foreign.compiler = "g++ (test) -O2";
  RecordCheck check = check_record(foreign, scope_);
  EXPECT_EQ(check.rejection, RecordRejection::OtherCompiler);
  EXPECT_FALSE(check.state.has_value());
}

TEST_F(RecordFilterTest, RecordsOfACompilerThatReplaysBelongToTheTask) {
  // What the tuner counts as tried: the rule of record_match.h, not the exact text.
  const RecordScope clang{dag_, test::kRecordTarget, "Debian clang version 14.0.6 -O3 -march=native"};
  Record r = record(1e-3, {split_i()});
  r.compiler = "Debian clang version 14.0.6 -march=native -O3 -O3";
  EXPECT_TRUE(check_record(r, clang).usable());
  r.compiler = "Debian clang version 14.0.5 -O3 -march=native";
  EXPECT_TRUE(check_record(r, clang).usable());
  r.compiler = "Debian clang version 15.0.7 -O3 -march=native";
  EXPECT_EQ(check_record(r, clang).rejection, RecordRejection::OtherCompiler);
  r.compiler = "Debian clang version 14.0.6 -O2 -march=native";
  EXPECT_EQ(check_record(r, clang).rejection, RecordRejection::OtherCompiler);
}

TEST_F(RecordFilterTest, BestRecordsAreTheFastestUsableOnesAndSkipThoseThatDoNotReplay) {
  std::vector<Record> records = {
      record(3e-3),
      record(1e-3, {std::make_shared<SplitStep>(9, 0, std::vector<int64_t>{2})}),  // no stage 9: does not apply
      record(2e-3, {split_i()}),
  };
  Record failed = record(0.5e-3);
  failed.error = MeasureError::WrongResult;
  records.push_back(failed);
  Record other_compiler = record(0.1e-3);
  other_compiler.compiler = "g++ (test) -O2";
  records.push_back(other_compiler);
  Record other_target = record(0.1e-3);
  other_target.target = "cpu:x86_64:othercpu:avx2:t2";
  records.push_back(other_target);
  records.push_back(record(0.0));
  std::vector<std::string> warnings;
  std::vector<ReplayedRecord> best = best_records(records, scope_, 2, warnings);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_DOUBLE_EQ(best[0].record.seconds, 2e-3);
  EXPECT_EQ(best[0].state.stage(2).leaves.size(), 4u);
  EXPECT_DOUBLE_EQ(best[1].record.seconds, 3e-3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("does not apply"), std::string::npos) << warnings[0];
  EXPECT_EQ(best_records(records, scope_, 1, warnings).size(), 1u);
}

TEST_F(RecordFilterTest, AScheduleMeasuredMoreThanOnceCountsAtItsMedian) {
  // The plain schedule once measured lucky (1 ms), then twice at 3 ms; the split one 2 ms.
  Record lucky = record(1e-3);
  Record again = record(3e-3);
  again.remeasure = true;
  std::vector<Record> records = {lucky, record(2e-3, {split_i()}), again, again};
  std::vector<std::string> warnings;
  std::vector<ReplayedRecord> best = best_records(records, scope_, 2, warnings);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_DOUBLE_EQ(best[0].record.seconds, 2e-3);
  EXPECT_EQ(best[0].state.stage(2).leaves.size(), 4u);
  EXPECT_DOUBLE_EQ(best[1].record.seconds, 3e-3);  // the median of 1, 3, 3
  EXPECT_FALSE(best[1].record.remeasure);          // its first record stands for it
  // Two measurements: their mean.
  EXPECT_DOUBLE_EQ(best_records({lucky, again}, scope_, 1, warnings)[0].record.seconds, 2e-3);
}

TEST(MedianTest, OddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0);
}

}  // namespace
}  // namespace ansor
