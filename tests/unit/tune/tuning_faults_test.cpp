// Tuning survives faulty candidates: compile errors, crashes, hangs and wrong results, planted by
// a decorator of the real measurer (fault_injecting_measurer.h), are records of failures; the
// budget is spent all the same and every record reaches the cache as it is measured.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "dag_builder.h"
#include "fault_injecting_measurer.h"
#include "host_measurer.h"
#include "measure/measurer.h"
#include "test_support.h"
#include "tune/tuner.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

class TuningFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_tuning_faults_test");
    fs::remove_all(dir_);
    measurer_ = test::host_measurer(dir_, 0.01, 3);
  }
  void TearDown() override {
    measurer_.reset();
    fs::remove_all(dir_);
  }

  fs::path dir_;
  std::unique_ptr<Measurer> measurer_;
  std::shared_ptr<const ComputeDAG> dag_ = test::DagBuilder().input("A", {48, 32}).constant("B", {32, 40}).matmul("C", "A", "B").build();
};

TEST_F(TuningFaultsTest, TuningFinishesItsBudgetDespiteFaults) {
  test::FaultInjectingMeasurer faulty(*measurer_, {{1, PlantedFault::CompileError},
                                                   {3, PlantedFault::Crash},
                                                   {6, PlantedFault::WrongResult},
                                                   {8, PlantedFault::Hang}});
  TuningCache cache((dir_ / "cache").string());
  TuneOptions options;
  options.trials = 10;
  options.batch_size = 5;
  options.confirm_schedules = 2;
  std::ostringstream progress;
  TuneSummary summary = tune_kernel("mm", dag_, faulty, cache, options, progress);
  EXPECT_EQ(summary.measured, 10);
  EXPECT_GE(summary.failed, 4);
  ASSERT_TRUE(summary.best.has_value());
  TuningCache::Loaded loaded = cache.load(measurer_->target().to_string());
  // The ten trials, then the confirmation of the fastest schedules.
  EXPECT_GT(summary.remeasured, 0);
  ASSERT_EQ(loaded.records.size(), 10u + static_cast<size_t>(summary.remeasured));
  for (size_t i = 0; i < loaded.records.size(); ++i) EXPECT_EQ(loaded.records[i].remeasure, i >= 10) << i;
  EXPECT_TRUE(loaded.warnings.empty());
  // Each planted fault is in the cache as a failure of its kind.
  std::map<MeasureError, int> errors;
  for (const Record& r : loaded.records) ++errors[r.error];
  for (MeasureError planted : {MeasureError::CompileError, MeasureError::Crash, MeasureError::WrongResult, MeasureError::RunTimeout})
    EXPECT_EQ(errors[planted], 1) << measure_error_name(planted);
  EXPECT_NE(progress.str().find("[tune] mm: 5/10 trials in "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("[tune] mm: 10/10 trials in "), std::string::npos) << progress.str();
}

}  // namespace
}  // namespace ansor
