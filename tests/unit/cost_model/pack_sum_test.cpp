// The pack-sum objective against hand computations, the per-workload normalisation of times,
// and the ranking metrics.
#include "cost_model/pack_sum.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/ranking_metrics.h"

namespace ansor {
namespace {

TEST(PackSumTest, GradientOfTheWeightedSquaredErrorOfSums) {
  // Program 0 has rows 0 and 1, program 1 has row 2.
  std::vector<float> predictions{0.1f, 0.2f, 0.5f};
  std::vector<size_t> offsets{0, 2, 3};
  std::vector<double> labels{1.0, 0.4}, weights{1.0, 0.4};
  std::vector<double> sums = pack_sums(predictions, offsets);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_NEAR(sums[0], 0.3, 1e-7);
  EXPECT_NEAR(sums[1], 0.5, 1e-7);
  PackSumGradients g = pack_sum_squared_error(predictions, offsets, labels, weights);
  // Program 0: 1.0 * (0.3 - 1.0); program 1: 0.4 * (0.5 - 0.4).
  ASSERT_EQ(g.gradient.size(), 3u);
  EXPECT_NEAR(g.gradient[0], -0.7, 1e-6);
  EXPECT_NEAR(g.gradient[1], -0.7, 1e-6);
  EXPECT_NEAR(g.gradient[2], 0.04, 1e-6);
  EXPECT_EQ(g.hessian, (std::vector<float>{1.0f, 1.0f, 0.4f}));
  // sqrt((1.0 * 0.49 + 0.4 * 0.01) / 1.4)
  EXPECT_NEAR(pack_sum_weighted_rmse(sums, labels, weights), std::sqrt(0.494 / 1.4), 1e-7);
}

TEST(PackSumTest, GradientMatchesFiniteDifferencesOfTheLoss) {
  std::vector<float> predictions{0.3f, -0.2f, 0.7f, 0.1f, 0.05f};
  std::vector<size_t> offsets{0, 1, 4, 5};
  std::vector<double> labels{0.9, 0.2, 1.0}, weights{0.9, 0.2, 1.0};
  auto loss = [&](const std::vector<float>& p) {
    std::vector<double> s = pack_sums(p, offsets);
    double l = 0;
    for (size_t i = 0; i < s.size(); ++i) l += weights[i] * (s[i] - labels[i]) * (s[i] - labels[i]) / 2;
    return l;
  };
  PackSumGradients g = pack_sum_squared_error(predictions, offsets, labels, weights);
  for (size_t r = 0; r < predictions.size(); ++r) {
    std::vector<float> up = predictions, down = predictions;
    up[r] += 1e-3f;
    down[r] -= 1e-3f;
    double numeric = (loss(up) - loss(down)) / (static_cast<double>(up[r]) - down[r]);
    EXPECT_NEAR(g.gradient[r], numeric, 1e-4) << "row " << r;
  }
}

TEST(PackSumTest, PackedRowsCheckTheRowLength) {
  PackedRows packed;
  packed.row_length = 2;
  ProgramRows a(2);
  a.add_row(std::vector<float>{1, 2});
  a.add_row(std::vector<float>{3, 4});
  packed.add(a);
  packed.add(ProgramRows(2));
  EXPECT_EQ(packed.offsets, (std::vector<size_t>{0, 2, 2}));
  EXPECT_EQ(packed.rows(), 2u);
  EXPECT_EQ(packed.programs(), 2u);
  EXPECT_THROW(packed.add(ProgramRows(3)), std::invalid_argument);
  EXPECT_THROW(a.add_row(std::vector<float>{1, 2, 3}), std::invalid_argument);
}

TEST(NormalizedThroughputTest, PerWorkloadBestOverSeconds) {
  std::vector<TrainingProgram> programs{
      {"a", ProgramRows(1), 2.0}, {"b", ProgramRows(1), 10.0}, {"a", ProgramRows(1), 1.0}, {"b", ProgramRows(1), 40.0}};
  EXPECT_EQ(normalized_throughputs(programs), (std::vector<double>{0.5, 1.0, 1.0, 0.25}));
  programs[1].seconds = -1;
  EXPECT_THROW(normalized_throughputs(programs), std::invalid_argument);
  programs[1].seconds = NAN;
  EXPECT_THROW(normalized_throughputs(programs), std::invalid_argument);
}

TEST(RankingMetricsTest, PairwiseAccuracyWithinWorkloads) {
  std::vector<std::string> workloads{"a", "a", "a", "b", "b"};
  std::vector<double> truth{3, 2, 1, 1, 5};
  // Within a: (0,1) right, (0,2) right, (1,2) tied: 2.5 of 3; within b: (3,4) wrong. Pairs
  // across workloads do not count.
  std::vector<double> predicted{0.9, 0.1, 0.1, 0.7, 0.2};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(workloads, truth, predicted), 2.5 / 4);
  // Pairs of equal truth are skipped.
  EXPECT_TRUE(
      std::isnan(pairwise_accuracy(std::vector<std::string>{"a", "a"}, std::vector<double>{1, 1}, std::vector<double>{0, 1})));
  EXPECT_THROW(pairwise_accuracy(workloads, truth, std::vector<double>{1}), std::invalid_argument);
}

TEST(RankingMetricsTest, RecallAtK) {
  std::vector<double> truth{5, 4, 3, 2, 1};
  std::vector<double> predicted{1, 5, 4, 0, 3};
  // True top 2: {0, 1}; predicted top 2: {1, 2}.
  EXPECT_DOUBLE_EQ(recall_at_k(truth, predicted, 2), 0.5);
  // True top 3: {0, 1, 2}; predicted top 3: {1, 2, 4}.
  EXPECT_DOUBLE_EQ(recall_at_k(truth, predicted, 3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(recall_at_k(truth, predicted, 10), 1.0);  // clamped to all 5
  EXPECT_TRUE(std::isnan(recall_at_k(truth, predicted, 0)));
}

TEST(RankingMetricsTest, TopKQuality) {
  std::vector<double> truth{5, 4, 3, 2, 1};
  std::vector<double> predicted{1, 5, 4, 0, 3};
  // The predicted top 1 and top 3 hold at best the program of true throughput 4 (of 5); the
  // predicted top 5 (all) hold the best.
  EXPECT_DOUBLE_EQ(top_k_quality(truth, predicted, 1), 0.8);
  EXPECT_DOUBLE_EQ(top_k_quality(truth, predicted, 3), 0.8);
  EXPECT_DOUBLE_EQ(top_k_quality(truth, predicted, 10), 1.0);
  EXPECT_TRUE(std::isnan(top_k_quality(truth, predicted, 0)));
}

}  // namespace
}  // namespace ansor
