// A kernel with no record of its own measures first the schedules of the same computation at
// other shapes, mapped to its own, and its search hears of them before proposing anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "host_measurer.h"
#include "measure/measurer.h"
#include "records/record_filter.h"
#include "schedule/shape_transfer.h"
#include "schedule/steps.h"
#include "test_support.h"
#include "tune/search_policy.h"
#include "tune/tuner.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

struct TransferLog {
  std::vector<std::string> calls;  // "propose N" / "update N"
  std::vector<MeasuredCandidate> updates;
};

TransferLog& transfer_log() {
  static TransferLog log;
  return log;
}

// Proposes Y's loop split by 1, 2, 4, ... in turn.
class SplittingPolicy : public SearchPolicy {
 public:
  explicit SplittingPolicy(const SearchTask& task) : dag_(task.dag) {}
  std::string_view name() const override { return "test-transfer"; }
  std::vector<State> propose(int n) override {
    transfer_log().calls.push_back(fmt::format("propose {}", n));
    std::vector<State> out;
    for (int i = 0; i < n; ++i, ++next_) {
      State s(dag_);
      s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{int64_t{1} << next_}));
      out.push_back(s);
    }
    return out;
  }
  void update(const std::vector<MeasuredCandidate>& measured) override {
    transfer_log().calls.push_back(fmt::format("update {}", measured.size()));
    transfer_log().updates.insert(transfer_log().updates.end(), measured.begin(), measured.end());
  }

 private:
  std::shared_ptr<const ComputeDAG> dag_;
  int next_ = 0;
};

class ShapeTransferTuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_shape_transfer_tuning_test");
    fs::remove_all(dir_);
    program_ = test::parse("kernel wide { X = input f32[64]\n Y[i:64] = X[i] * 2.0 }\nkernel narrow { X = input f32[24]\n Y[i:24] = X[i] * 2.0 }");
    register_search_policy("test-transfer", [](const SearchTask& task) { return std::make_unique<SplittingPolicy>(task); });
    transfer_log() = {};
    measurer_ = test::host_measurer(dir_, 0.001, MeasureOptions().run_timeout_seconds);
  }
  void TearDown() override {
    measurer_.reset();
    fs::remove_all(dir_);
  }

  TuningCache cache() const { return TuningCache((dir_ / "cache").string()); }

  // A successful record of `kernel` whose schedule splits Y's loop by `inner`, in the cache.
  std::vector<StepPtr> add_record(const std::string& kernel, int64_t inner) {
    std::vector<StepPtr> steps = {std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{4, inner})};
    cache().append(test::make_record(*test::dag_of(program_, kernel), measurer_->target().to_string(), measurer_->compiler().identity(), 1e-6, steps));
    return steps;
  }

  TuneSummary tune_narrow(int trials, int transfer_seeds, std::ostringstream& progress) {
    TuneOptions options;
    options.trials = trials;
    options.batch_size = 4;
    options.policy = "test-transfer";
    options.transfer_seeds = transfer_seeds;
    return tune_kernel("narrow", test::dag_of(program_, "narrow"), *measurer_, cache(), options, progress);
  }

  fs::path dir_;
  Program program_;
  std::unique_ptr<Measurer> measurer_;
};

TEST_F(ShapeTransferTuningTest, TheOtherShapesRecordsAreMappedAndMeasuredBeforeTheSearchProposes) {
  // An inner length of 10, not whole vectors on any target, so that both fits differ everywhere.
  std::vector<StepPtr> steps = add_record("wide", 10);
  std::ostringstream progress;
  TuneSummary summary = tune_narrow(5, 8, progress);
  // Round one: the default schedule and the record mapped both ways, no proposal; then the search.
  EXPECT_EQ(transfer_log().calls, (std::vector<std::string>{"update 3", "propose 2", "update 2"}));
  EXPECT_EQ(summary.transferred, 2);
  ASSERT_EQ(transfer_log().updates.size(), 5u);
  // Divisors of 24, 2 x 12; or the inner 10 kept and 24 / 10 = 2 of the 4 (ragged). Both measured correct.
  const std::vector<std::pair<SplitFit, std::vector<int64_t>>> fits = {{SplitFit::Divisors, {2, 12}}, {SplitFit::KeepInner, {2, 10}}};
  for (size_t i = 0; i < fits.size(); ++i) {
    std::string why;
    std::optional<State> mapped = map_schedule(steps, test::dag_of(program_, "narrow"), fits[i].first, why);
    ASSERT_TRUE(mapped) << why;
    const MeasuredCandidate& seed = transfer_log().updates[i + 1];
    EXPECT_EQ(seed.state.signature(), mapped->signature());
    EXPECT_EQ(std::dynamic_pointer_cast<const SplitStep>(seed.record.steps.at(0))->lengths, fits[i].second);
    EXPECT_TRUE(seed.record.ok()) << seed.record.error_message;
  }
  EXPECT_NE(progress.str().find("[tune] narrow: no record of its own; 2 schedules of the same computation at 1 other shape"), std::string::npos)
      << progress.str();
}

TEST_F(ShapeTransferTuningTest, NoSeedsWhenTheKernelHasARecordOrTransferIsOff) {
  add_record("wide", 16);
  std::ostringstream off;
  TuneSummary summary = tune_narrow(2, 0, off);
  EXPECT_EQ(transfer_log().calls, (std::vector<std::string>{"propose 1", "update 2"}));
  EXPECT_EQ(summary.transferred, 0);
  EXPECT_EQ(off.str().find("seed the search"), std::string::npos) << off.str();

  // Now narrow has records of its own.
  transfer_log() = {};
  std::ostringstream own;
  summary = tune_narrow(2, 8, own);
  EXPECT_EQ(summary.transferred, 0);
  EXPECT_EQ(transfer_log().calls.at(1), "propose 2");
  EXPECT_EQ(own.str().find("seed the search"), std::string::npos) << own.str();
}

}  // namespace
}  // namespace ansor
