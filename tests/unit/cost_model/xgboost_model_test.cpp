// The XGBoost cost model on synthetic programs whose true score is a known sum over rows of a
// nonlinear function of their features: it must rank held-out programs well above chance, save
// and load without changing a prediction, refuse files of other features, and stay untrained
// on too few programs.
#include "cost_model/xgboost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "cost_model/ranking_metrics.h"
#include "support/file_util.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr int kRowLength = 8;
const std::string kFeatureSet = "synthetic-v1";

// A statement's contribution to its program's throughput: nonlinear in three features,
// indifferent to the others (noise the trees must learn to ignore).
double row_score(std::span<const float> x) {
  double s = std::exp(0.4 * x[0]) * (x[1] > 2.0f ? 2.0 : 0.5);
  return s + 0.3 * x[2] * x[2];
}

struct Synthetic {
  std::vector<TrainingProgram> programs;
  std::vector<double> truth;  // the true score (a throughput)
};

// Programs of `workloads` workloads with 1 to 12 rows each; seconds = 1 / true score. Each
// workload draws its features around its own offset, so throughputs are normalised per
// workload as in real records.
Synthetic make_programs(int count, int workloads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> feature(0.0f, 4.0f);
  std::uniform_int_distribution<int> row_count(1, 12);
  Synthetic data;
  for (int i = 0; i < count; ++i) {
    int w = i % workloads;
    TrainingProgram p{"w" + std::to_string(w), ProgramRows(kRowLength), 0};
    int rows = row_count(rng);
    double score = 0;
    for (int r = 0; r < rows; ++r) {
      std::vector<float> row(kRowLength);
      for (float& x : row) x = feature(rng);
      row[kRowLength - 1] = static_cast<float>(w);
      score += row_score(row);
      p.rows.add_row(row);
    }
    p.seconds = 1.0 / score;
    data.truth.push_back(score);
    data.programs.push_back(std::move(p));
  }
  return data;
}

std::vector<ProgramRows> rows_of(const Synthetic& data) {
  std::vector<ProgramRows> rows;
  for (const TrainingProgram& p : data.programs) rows.push_back(p.rows);
  return rows;
}

std::vector<std::string> workloads_of(const Synthetic& data) {
  std::vector<std::string> w;
  for (const TrainingProgram& p : data.programs) w.push_back(p.workload);
  return w;
}

XGBoostParams small_params() {
  XGBoostParams p;
  p.nthread = 1;  // steady times when the tests share the machine
  return p;
}

TEST(XGBoostModelTest, RanksHeldOutProgramsWellAboveChance) {
  Synthetic train = make_programs(1200, 3, 1);
  Synthetic held_out = make_programs(300, 3, 2);
  XGBoostModel model(kRowLength, kFeatureSet, small_params());
  model.train(train.programs);
  ASSERT_TRUE(model.trained());
  EXPECT_EQ(model.training_programs(), 1200);
  EXPECT_GT(model.rounds(), 0);
  std::vector<double> predicted = model.predict(rows_of(held_out));
  std::vector<std::string> workloads = workloads_of(held_out);
  double accuracy = pairwise_accuracy(workloads, held_out.truth, predicted);
  std::vector<double> truth0, predicted0;
  for (size_t i = 0; i < predicted.size(); ++i)
    if (workloads[i] == "w0") truth0.push_back(held_out.truth[i]), predicted0.push_back(predicted[i]);
  double recall = recall_at_k(truth0, predicted0, 10);
  std::printf("held-out pairwise accuracy %.3f, recall@10 (workload w0) %.2f, %d rounds\n", accuracy, recall, model.rounds());
  EXPECT_GT(accuracy, 0.8);
  EXPECT_GE(recall, 0.3);
}

// Times with no relation to the features: the held-out error stops improving early, so far
// fewer trees are grown than the cap; without a hold-out the cap is the round count.
TEST(XGBoostModelTest, EarlyStoppingOnHeldOutPrograms) {
  Synthetic noise = make_programs(400, 2, 9);
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> seconds(1.0, 2.0);
  for (TrainingProgram& p : noise.programs) p.seconds = seconds(rng);
  XGBoostParams params = small_params();
  params.max_rounds = 150;
  params.early_stopping_rounds = 10;
  XGBoostModel stopped(kRowLength, kFeatureSet, params);
  stopped.train(noise.programs);
  EXPECT_LT(stopped.rounds(), 75);
  EXPECT_GE(stopped.rounds(), 1);
  params.validation_fraction = 0;
  params.max_rounds = 20;
  XGBoostModel fixed(kRowLength, kFeatureSet, params);
  fixed.train(noise.programs);
  EXPECT_EQ(fixed.rounds(), 20);
}

TEST(XGBoostModelTest, TooFewProgramsLeaveTheModelUntrained) {
  XGBoostParams params = small_params();
  params.min_programs = 50;
  XGBoostModel model(kRowLength, kFeatureSet, params);
  Synthetic few = make_programs(49, 2, 3);
  model.train(few.programs);
  EXPECT_FALSE(model.trained());
  EXPECT_THROW(model.predict(rows_of(few)), std::logic_error);
  EXPECT_THROW(model.save("/nonexistent/model.ubj"), std::logic_error);
  // Programs without rows do not count.
  Synthetic enough = make_programs(50, 2, 3);
  enough.programs[0].rows.values.clear();
  model.train(enough.programs);
  EXPECT_FALSE(model.trained());
  model.train(make_programs(50, 2, 4).programs);
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(model.training_programs(), 50);
}

TEST(XGBoostModelTest, RejectsRowsOfAnotherLengthAndBadTimes) {
  XGBoostModel model(kRowLength, kFeatureSet, small_params());
  Synthetic data = make_programs(10, 1, 5);
  data.programs[3].rows.row_length = kRowLength + 1;
  EXPECT_THROW(model.train(data.programs), std::invalid_argument);
  data = make_programs(10, 1, 5);
  data.programs[4].seconds = 0;
  EXPECT_THROW(model.train(data.programs), std::invalid_argument);
}

TEST(XGBoostModelTest, SaveThenLoadGivesIdenticalPredictions) {
  std::filesystem::path dir = test::test_temp_dir("cost_model");
  std::filesystem::remove_all(dir);
  std::string path = (dir / "model.ubj").string();
  Synthetic data = make_programs(300, 2, 6);
  XGBoostModel model(kRowLength, kFeatureSet, small_params());
  model.train(data.programs);
  ASSERT_TRUE(model.trained());
  model.save(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));

  XGBoostModel loaded(kRowLength, kFeatureSet, small_params());
  loaded.load(path);
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.training_programs(), 300);
  EXPECT_EQ(loaded.rounds(), model.rounds());
  Synthetic fresh = make_programs(100, 2, 7);
  std::vector<double> a = model.predict(rows_of(fresh)), b = loaded.predict(rows_of(fresh));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "program " << i;
  std::filesystem::remove_all(dir);
}

TEST(XGBoostModelTest, LoadRefusesOtherFeaturesAndOtherFiles) {
  std::filesystem::path dir = test::test_temp_dir("cost_model");
  std::filesystem::remove_all(dir);
  std::string path = (dir / "model.ubj").string();
  XGBoostModel model(kRowLength, kFeatureSet, small_params());
  model.train(make_programs(200, 2, 8).programs);
  model.save(path);

  auto load_error = [&](XGBoostModel& target, const std::string& file) {
    try {
      target.load(file);
    } catch (const CostModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  XGBoostModel longer(kRowLength + 1, kFeatureSet, small_params());
  EXPECT_EQ(load_error(longer, path), "the cost model '" + path +
                                          "' was trained on rows of 8 features of feature set 'synthetic-v1'; this model takes "
                                          "rows of 9 features of feature set 'synthetic-v1'");
  EXPECT_FALSE(longer.trained());
  XGBoostModel other_set(kRowLength, "synthetic-v2", small_params());
  EXPECT_NE(load_error(other_set, path)
                .find("feature set 'synthetic-v1'; this model takes rows of 8 features of feature set 'synthetic-v2'"),
            std::string::npos);
  EXPECT_FALSE(other_set.trained());

  XGBoostModel same(kRowLength, kFeatureSet, small_params());
  EXPECT_EQ(load_error(same, (dir / "missing.ubj").string()),
            "cannot read the cost model '" + (dir / "missing.ubj").string() + "'");
  std::string garbage = (dir / "garbage.ubj").string();
  write_file_if_changed(garbage, "not a model");
  EXPECT_NE(load_error(same, garbage).find("is not an XGBoost model"), std::string::npos);
  EXPECT_FALSE(same.trained());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ansor
