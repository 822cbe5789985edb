// The tuning loop drives its search policy round by round: the cache's records of the task
// first (update), then per round propose → measure (each record appended) → update with the
// states and their records. A scripted policy records the calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>

#include "host_measurer.h"
#include "measure/measurer.h"
#include "records/record_filter.h"
#include "sampler/default_schedule.h"
#include "schedule/steps.h"
#include "test_support.h"
#include "tune/search_policy.h"
#include "tune/tuner.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

// What the scripted policy was asked and told, in order.
struct PolicyLog {
  std::vector<std::string> calls;  // "propose N" / "update N"
  std::vector<MeasuredCandidate> updates;
  std::vector<State> proposals;
};

// Proposes Y's loop split by 1, 2, 4, 8 in turn; then nothing.
class ScriptedPolicy : public SearchPolicy {
 public:
  ScriptedPolicy(const SearchTask& task, PolicyLog& log) : dag_(task.dag), log_(log) {}
  std::string_view name() const override { return "test-scripted"; }
  std::vector<State> propose(int n) override {
    log_.calls.push_back(fmt::format("propose {}", n));
    std::vector<State> out;
    for (; static_cast<int>(out.size()) < n && next_ < 4; ++next_) {
      State s(dag_);
      s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{int64_t{1} << next_}));
      out.push_back(s);
      log_.proposals.push_back(s);
    }
    return out;
  }
  void update(const std::vector<MeasuredCandidate>& measured) override {
    log_.calls.push_back(fmt::format("update {}", measured.size()));
    log_.updates.insert(log_.updates.end(), measured.begin(), measured.end());
  }

 private:
  std::shared_ptr<const ComputeDAG> dag_;
  PolicyLog& log_;
  int next_ = 0;
};

PolicyLog& scripted_log() {
  static PolicyLog log;
  return log;
}

class TuningLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_tuning_loop_test");
    fs::remove_all(dir_);
    program_ = test::parse("kernel add1 { X = input f32[8]\n Y[i:8] = X[i] + 1 }");
    register_search_policy("test-scripted",
                           [](const SearchTask& task) { return std::make_unique<ScriptedPolicy>(task, scripted_log()); });
    scripted_log() = {};
    measurer_ = test::host_measurer(dir_, 0.001, MeasureOptions().run_timeout_seconds);
  }
  void TearDown() override {
    measurer_.reset();
    fs::remove_all(dir_);
  }

  // Without confirmation unless asked: the loop's tests count trials.
  TuneSummary tune(int trials, int batch, std::ostringstream& progress, int confirm = 0, CandidateMeasurer* measurer = nullptr) {
    TuneOptions options;
    options.trials = trials;
    options.batch_size = batch;
    options.policy = "test-scripted";
    options.confirm_schedules = confirm;
    return tune_kernel(program_.kernels[0].name, std::make_shared<const ComputeDAG>(program_.kernels[0].dag),
                       measurer ? *measurer : *measurer_, TuningCache((dir_ / "cache").string()), options, progress);
  }

  std::vector<Record> cached() const { return TuningCache((dir_ / "cache").string()).load(measurer_->target().to_string()).records; }

  fs::path dir_;
  Program program_;
  std::unique_ptr<Measurer> measurer_;
};

TEST_F(TuningLoopTest, ProposeMeasureUpdatePerRound) {
  std::ostringstream progress;
  TuneSummary summary = tune(4, 2, progress);
  PolicyLog& log = scripted_log();
  // The default schedule takes the first trial; the policy proposes the rest.
  EXPECT_EQ(log.calls, (std::vector<std::string>{"propose 1", "update 2", "propose 2", "update 2"}));
  EXPECT_EQ(summary.measured, 4);
  ASSERT_TRUE(summary.best.has_value());
  ASSERT_EQ(log.updates.size(), 4u);
  auto dag = std::make_shared<const ComputeDAG>(program_.kernels[0].dag);
  EXPECT_EQ(log.updates[0].state.signature(), default_schedule(dag, SamplerContext::for_cpu(measurer_->target())).signature());
  for (size_t i = 0; i < log.updates.size(); ++i) {
    const MeasuredCandidate& m = log.updates[i];
    if (i > 0) {
      EXPECT_EQ(m.state.signature(), log.proposals[i - 1].signature());
    }
    EXPECT_TRUE(m.record.ok()) << m.record.error_message;
    EXPECT_EQ(replay(std::make_shared<const ComputeDAG>(program_.kernels[0].dag), m.record.steps).signature(), m.state.signature());
  }
  EXPECT_EQ(TuningCache((dir_ / "cache").string()).load(measurer_->target().to_string()).records.size(), 4u);
  EXPECT_NE(progress.str().find("[tune] add1: 2/4 trials in "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("[tune] add1: 4/4 trials in "), std::string::npos) << progress.str();
  // Each round says where its time went.
  std::regex round_line(R"(batch 2: 2 printed in [0-9.]+ s, built in [0-9.]+ s, measured in [0-9.]+ s, search [0-9.]+ s, lock wait [0-9.]+ s\n)");
  EXPECT_TRUE(std::regex_search(progress.str(), round_line)) << progress.str();
  // ... and so does the whole run.
  std::regex closing_line(
      R"(add1: done, 4 trials in [0-9.]+ s \(0 failed\), [0-9.]+ trials/s: printing [0-9.]+ s, compiling [0-9.]+ s \([0-9.]+ s of CPU\), running [0-9.]+ s, )"
      R"(lock wait [0-9.]+ s, search and the rest [0-9.]+ s; 0 programs measured before; 0 confirmation measurements\n)");
  EXPECT_TRUE(std::regex_search(progress.str(), closing_line)) << progress.str();
}

TEST_F(TuningLoopTest, TheCachesRecordsReachThePolicyFirstAndAnEmptyProposalEndsTheLoop) {
  std::ostringstream first, second;
  tune(2, 2, first);
  scripted_log() = {};
  TuneSummary summary = tune(6, 2, second);
  PolicyLog& log = scripted_log();
  // The two records of the first run (the default schedule among them: not measured again),
  // then rounds until the script runs out after four.
  EXPECT_EQ(log.calls, (std::vector<std::string>{"update 2", "propose 2", "update 2", "propose 2", "update 2", "propose 2"}));
  EXPECT_EQ(summary.measured, 4);
  ASSERT_TRUE(summary.best.has_value());
  EXPECT_NE(second.str().find("no new schedules to try after 4 trials"), std::string::npos) << second.str();
  EXPECT_EQ(TuningCache((dir_ / "cache").string()).load(measurer_->target().to_string()).records.size(), 6u);
}

// The real measurer with each record rewritten before it is handed on: how the tests plant
// outcomes that real measurements give only by chance.
class RewrittenRecords : public CandidateMeasurer {
 public:
  using Rewrite = std::function<void(const Candidate&, Record&)>;
  RewrittenRecords(CandidateMeasurer& real, Rewrite rewrite) : real_(real), rewrite_(std::move(rewrite)) {}
  std::vector<Record> measure(const std::vector<Candidate>& candidates, double best_seconds,
                              const std::function<void(const Record&)>& on_record) override {
    std::vector<Record> records = real_.measure(candidates, best_seconds, {});
    for (size_t i = 0; i < records.size(); ++i) {
      rewrite_(candidates[i], records[i]);
      reused_ += records[i].copied;
      if (on_record) on_record(records[i]);
    }
    return records;
  }
  const Target& target() const override { return real_.target(); }
  const KernelCompiler& compiler() const override { return real_.compiler(); }
  double build_seconds() const override { return real_.build_seconds(); }
  double run_seconds() const override { return real_.run_seconds(); }
  double lock_wait_seconds() const override { return real_.lock_wait_seconds(); }
  int reused() const override { return reused_; }

 private:
  CandidateMeasurer& real_;
  Rewrite rewrite_;
  int reused_ = 0;
};


bool splits_by_two(const State& s) {
  for (const StepPtr& step : s.steps())
    if (auto* split = dynamic_cast<const SplitStep*>(step.get()); split && split->lengths == std::vector<int64_t>{2}) return true;
  return false;
}

TEST_F(TuningLoopTest, ACopyOfAnEarlierMeasurementIsNoTrialAndTheRoundAsksForAnother) {
  // As Measurer reports a schedule that lowers to a program it measured before
  // (MeasureOptions::reuse_programs): here, the schedule that splits by 2.
  RewrittenRecords copies(*measurer_, [](const Candidate& c, Record& r) { r.copied = splits_by_two(c.state); });
  std::ostringstream progress;
  TuneSummary summary = tune(4, 2, progress, 0, &copies);
  // Round 1: the default schedule and split by 1. Round 2: split by 2 (a copy) and by 4, then
  // one more for the copy: split by 8. Four trials and their records, one copy, not recorded.
  EXPECT_EQ(scripted_log().calls, (std::vector<std::string>{"propose 1", "update 2", "propose 2", "update 2", "propose 1", "update 1"}));
  EXPECT_EQ(summary.measured, 4);
  EXPECT_EQ(summary.copies, 1);
  std::vector<Record> records = cached();
  ASSERT_EQ(records.size(), 4u);
  for (const Record& r : records) EXPECT_FALSE(splits_by_two(replay(std::make_shared<const ComputeDAG>(program_.kernels[0].dag), r.steps)));
  EXPECT_NE(progress.str().find("[tune] add1: 4/4 trials in "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(", and 1 programs measured before (no trials)"), std::string::npos) << progress.str();
}

TEST_F(TuningLoopTest, APolicyThatOffersOnlyCopiesEndsTheLoop) {
  RewrittenRecords copies(*measurer_, [](const Candidate&, Record& r) { r.copied = true; });
  std::ostringstream progress;
  TuneSummary summary = tune(4, 2, progress, 0, &copies);
  // Everything the script has comes back as a copy (not recorded); the round asks again after
  // each batch of copies until the script runs out, and the loop ends without a trial.
  EXPECT_EQ(scripted_log().calls,
            (std::vector<std::string>{"propose 1", "update 2", "propose 2", "update 2", "propose 2", "update 1", "propose 2"}));
  EXPECT_EQ(summary.measured, 0);
  EXPECT_EQ(summary.copies, 5);
  EXPECT_TRUE(cached().empty());
  EXPECT_NE(progress.str().find("no new schedules to try after 0 trials (5 proposed schedules lowered to programs measured before)"),
            std::string::npos)
      << progress.str();
}

TEST_F(TuningLoopTest, TheFastestSchedulesAreMeasuredAgainAndCountAtTheirMedian) {
  // The first measurement of all at a picosecond: one lucky measurement (a quiet moment of a
  // shared machine makes them, less extreme).
  std::optional<double> lucky_seconds;
  RewrittenRecords lucky(*measurer_, [&](const Candidate&, Record& r) {
    if (!lucky_seconds) lucky_seconds = r.seconds = 1e-12;
  });
  std::ostringstream progress;
  TuneSummary summary = tune(4, 2, progress, 2, &lucky);
  // The two fastest measured twice more each (one more pass when a new median reorders them: at
  // most three passes of two); neither trials nor news for the policy.
  EXPECT_EQ(summary.measured, 4);
  EXPECT_GE(summary.remeasured, 4);
  EXPECT_LE(summary.remeasured, 6);
  EXPECT_EQ(scripted_log().calls, (std::vector<std::string>{"propose 1", "update 2", "propose 2", "update 2"}));
  std::vector<Record> records = cached();
  ASSERT_EQ(records.size(), 4u + static_cast<size_t>(summary.remeasured));
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const Record& r) { return r.remeasure; }), summary.remeasured);
  // The lucky schedule (the default, measured first) was among the two; its median is no
  // longer the lucky time, so whichever schedule is best, it is not at that time.
  ASSERT_TRUE(lucky_seconds.has_value());
  EXPECT_EQ(schedule_key(records[4]), schedule_key(records[0]));
  ASSERT_TRUE(summary.best.has_value());
  EXPECT_GT(summary.best->seconds, *lucky_seconds);
  EXPECT_NE(progress.str().find(fmt::format("[tune] add1: confirmed the fastest schedules with {} more measurements in ", summary.remeasured)),
            std::string::npos)
      << progress.str();
  // The emitter's choice agrees with the tuner's.
  std::vector<std::string> notes;
  RecordScope scope{std::make_shared<const ComputeDAG>(program_.kernels[0].dag), measurer_->target().to_string(),
                    measurer_->compiler().identity()};
  std::vector<ReplayedRecord> best = best_records(records, scope, 1, notes);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best[0].record.seconds, summary.best->seconds);

  // A later run counts the four trials, not the confirmations, starts from the same best, and
  // confirms nothing before it has measured anything.
  TuningCache cache((dir_ / "cache").string());
  TuneOptions options;
  options.policy = "test-scripted";
  options.confirm_schedules = 2;
  TuningTask resumed(program_.kernels[0].name, scope.dag, *measurer_, cache, options);
  EXPECT_EQ(resumed.summary().earlier_seconds.size(), 4u);
  ASSERT_TRUE(resumed.summary().best.has_value());
  EXPECT_DOUBLE_EQ(resumed.summary().best->seconds, summary.best->seconds);
  std::ostringstream nothing;
  EXPECT_EQ(resumed.confirm_best(nothing), 0);
  EXPECT_EQ(cached().size(), records.size());
}

}  // namespace
}  // namespace ansor
