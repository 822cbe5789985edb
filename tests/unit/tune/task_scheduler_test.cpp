// The task scheduler on synthetic tasks whose best latency follows a known curve of the rounds
// they were given: the gradient strategy against round robin, each objective's formula and
// behaviour, dead tasks, alike tasks and resumed runs.
#include "tune/task_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ansor {
namespace {

// The time of a kernel with no successful measurement.
constexpr double kUnmeasured = std::numeric_limits<double>::infinity();

// Best latency after r rounds: from `start` towards `floor`, e-folding every `tau` rounds (the
// first round finds `start`); nothing new to try after `max_rounds`.
class CurveTask : public SchedulerTask {
 public:
  CurveTask(double start, double floor, double tau, double flops = 1e9, int max_rounds = 1 << 20)
      : start_(start), floor_(floor), tau_(tau), flops_(flops), max_rounds_(max_rounds) {}
  int run_round(int n) override {
    if (rounds_ >= max_rounds_) return 0;
    ++rounds_;
    trials_ += n;
    return n;
  }
  double best_seconds() const override { return rounds_ == 0 ? kUnmeasured : floor_ + (start_ - floor_) * std::exp(-(rounds_ - 1) / tau_); }
  double flop_count() const override { return flops_; }
  int rounds() const { return rounds_; }
  int trials() const { return trials_; }

 private:
  double start_, floor_, tau_, flops_;
  int max_rounds_;
  int rounds_ = 0, trials_ = 0;
};

std::vector<SchedulerTask*> pointers(std::vector<CurveTask>& tasks) {
  std::vector<SchedulerTask*> p;
  for (CurveTask& t : tasks) p.push_back(&t);
  return p;
}

// A network of tasks whose costs differ: one heavy task that keeps improving, light ones that
// improve little.
std::vector<CurveTask> mixed_tasks() {
  return {CurveTask(10e-3, 2e-3, 8), CurveTask(1e-3, 0.9e-3, 2), CurveTask(0.5e-3, 0.45e-3, 2), CurveTask(2e-3, 1.5e-3, 3)};
}

double weighted_latency(const std::vector<CurveTask>& tasks, const std::vector<double>& weights) {
  double sum = 0;
  for (size_t i = 0; i < tasks.size(); ++i) sum += weights[i] * tasks[i].best_seconds();
  return sum;
}

TEST(TaskSchedulerTest, GradientReachesALowerWeightedLatencyThanRoundRobinForTheSameTrials) {
  const std::vector<double> weights = {1, 3, 2, 1};
  for (uint64_t seed : {0, 1, 2}) {
    std::vector<CurveTask> gradient_tasks = mixed_tasks(), robin_tasks = mixed_tasks();
    TaskSchedulerOptions options;
    options.seed = seed;
    TaskScheduler gradient(pointers(gradient_tasks), weights, {}, {}, options);
    options.strategy = SchedulingStrategy::RoundRobin;
    TaskScheduler robin(pointers(robin_tasks), weights, {}, {}, options);
    EXPECT_EQ(gradient.run(16 * 40), 16 * 40);
    EXPECT_EQ(robin.run(16 * 40), 16 * 40);
    double g = weighted_latency(gradient_tasks, weights), r = weighted_latency(robin_tasks, weights);
    EXPECT_DOUBLE_EQ(gradient.objective_value(), g);
    EXPECT_LT(g, 0.9 * r) << "seed " << seed;
    // Round robin gives every task the same rounds; the gradient gives the heavy task most.
    EXPECT_EQ(robin_tasks[0].rounds(), 10);
    EXPECT_GT(gradient_tasks[0].rounds(), 15);
    for (const CurveTask& t : gradient_tasks) EXPECT_GE(t.rounds(), 1) << "every task is warmed up";
  }
}

TEST(TaskSchedulerTest, WarmUpGivesEveryTaskARoundFirstInOrder) {
  std::vector<CurveTask> tasks = mixed_tasks();
  TaskScheduler scheduler(pointers(tasks), {}, {}, {}, {});
  for (int i = 0; i < 4; ++i) {
    std::optional<SchedulerRound> round = scheduler.step(1000);
    ASSERT_TRUE(round);
    EXPECT_EQ(round->task, i);
    EXPECT_EQ(round->measured, 16);
  }
}

TEST(TaskSchedulerTest, TheLastRoundTakesOnlyWhatTheBudgetHasLeft) {
  std::vector<CurveTask> tasks = mixed_tasks();
  TaskScheduler scheduler(pointers(tasks), {}, {}, {}, {});
  EXPECT_EQ(scheduler.run(70), 70);
  int trials = 0;
  for (const CurveTask& t : tasks) trials += t.trials();
  EXPECT_EQ(trials, 70);
}

TEST(TaskSchedulerTest, WeightedLatencyIsTheSumOverNetworksOfWeightedLatencies) {
  std::vector<CurveTask> tasks = {CurveTask(2e-3, 1e-3, 1), CurveTask(3e-3, 1e-3, 1)};
  std::vector<SchedulerNetwork> networks = {{"a", {{0, 2}, {1, 1}}, std::nullopt, std::nullopt}, {"b", {{1, 4}}, std::nullopt, std::nullopt}};
  TaskScheduler scheduler(pointers(tasks), {}, networks, {}, {});
  EXPECT_EQ(scheduler.objective_value(), kUnmeasured);
  scheduler.run(32);  // the warm-up round of each
  EXPECT_DOUBLE_EQ(scheduler.objective_value(), 2 * 2e-3 + 1 * 3e-3 + 4 * 3e-3);
}

TEST(TaskSchedulerTest, LatencyRequirementLeavesANetworkThatMeetsIt) {
  // Network "fast" meets its requirement after the warm-up; "slow" never does.
  std::vector<CurveTask> tasks = {CurveTask(1e-3, 0.2e-3, 4), CurveTask(5e-3, 1e-3, 4)};
  std::vector<SchedulerNetwork> networks = {{"fast", {{0, 1}}, 2e-3, std::nullopt}, {"slow", {{1, 1}}, 0.5e-3, std::nullopt}};
  TaskSchedulerOptions options;
  options.objective = SchedulerObjective::LatencyRequirement;
  options.eps_greedy = 0;
  TaskScheduler scheduler(pointers(tasks), {}, networks, {}, options);
  scheduler.run(16 * 20);
  EXPECT_EQ(tasks[0].rounds(), 1);
  EXPECT_EQ(tasks[1].rounds(), 19);
  EXPECT_DOUBLE_EQ(scheduler.objective_value(), 2e-3 + tasks[1].best_seconds());
  // Under f1 the same tasks share the rounds: the fast one still has time to gain.
  std::vector<CurveTask> f1_tasks = {CurveTask(1e-3, 0.2e-3, 4), CurveTask(5e-3, 1e-3, 4)};
  options.objective = SchedulerObjective::WeightedLatency;
  TaskScheduler f1(pointers(f1_tasks), {}, networks, {}, options);
  f1.run(16 * 20);
  EXPECT_GT(f1_tasks[0].rounds(), 1);
}

TEST(TaskSchedulerTest, LatencyRequirementStopsWhenEveryNetworkMeetsIt) {
  std::vector<CurveTask> tasks = {CurveTask(4e-3, 0.5e-3, 2)};
  std::vector<SchedulerNetwork> networks = {{"n", {{0, 1}}, 1e-3, std::nullopt}};
  TaskSchedulerOptions options;
  options.objective = SchedulerObjective::LatencyRequirement;
  TaskScheduler scheduler(pointers(tasks), {}, networks, {}, options);
  int measured = scheduler.run(16 * 100);
  EXPECT_LT(measured, 16 * 100);
  EXPECT_LE(tasks[0].best_seconds(), 1e-3);
  EXPECT_GT(tasks[0].best_seconds() * 0.9, 1e-3 * 0.5) << "it stopped soon after meeting the requirement";
}

TEST(TaskSchedulerTest, GeometricSpeedupIsMinusTheGeometricMeanOfSpeedUps) {
  std::vector<CurveTask> tasks = {CurveTask(2e-3, 1e-3, 1), CurveTask(1e-3, 1e-3, 1)};
  std::vector<SchedulerNetwork> networks = {{"a", {{0, 1}}, std::nullopt, 8e-3}, {"b", {{1, 2}}, std::nullopt, 4e-3}};
  TaskSchedulerOptions options;
  options.objective = SchedulerObjective::GeometricSpeedup;
  TaskScheduler scheduler(pointers(tasks), {}, networks, {}, options);
  scheduler.run(32);
  // Speed-ups 8/2 = 4 and 4/2 = 2: geometric mean sqrt(8).
  EXPECT_NEAR(scheduler.objective_value(), -std::sqrt(8.0), 1e-12);
  // A network without a reference latency cannot be scored under f3.
  networks[1].reference_seconds.reset();
  EXPECT_THROW(TaskScheduler(pointers(tasks), {}, networks, {}, options), std::invalid_argument);
}

TEST(TaskSchedulerTest, GeometricSpeedupWeighsAGainByItsShareOfItsNetwork) {
  // Network a: two 4 ms tasks; network b: one 1 ms task; all improve alike. f1 ranks by the
  // absolute gain (a's tasks); f3 by the relative gain of the network (b's task: 1 ms of 1 ms
  // against 4 ms of 8 ms).
  auto make = [] { return std::vector<CurveTask>{CurveTask(4e-3, 1e-3, 8), CurveTask(4e-3, 1e-3, 8), CurveTask(1e-3, 0.25e-3, 8)}; };
  std::vector<SchedulerNetwork> networks = {{"a", {{0, 1}, {1, 1}}, std::nullopt, 80e-3}, {"b", {{2, 1}}, std::nullopt, 2e-3}};
  TaskSchedulerOptions options;
  options.objective = SchedulerObjective::GeometricSpeedup;
  std::vector<CurveTask> f3_tasks = make();
  TaskScheduler f3(pointers(f3_tasks), {}, networks, {}, options);
  f3.run(16 * 3);
  std::vector<double> grads = f3.gradients();
  EXPECT_LT(grads[2], grads[0]);
  EXPECT_DOUBLE_EQ(grads[0], grads[1]);
  options.objective = SchedulerObjective::WeightedLatency;
  std::vector<CurveTask> f1_tasks = make();
  TaskScheduler f1(pointers(f1_tasks), {}, networks, {}, options);
  f1.run(16 * 3);
  grads = f1.gradients();
  EXPECT_LT(grads[0], grads[2]);
}

TEST(TaskSchedulerTest, EarlyStoppingStopsTasksThatNoLongerImprove) {
  // Task 0 reaches its floor at once (tau tiny); task 1 keeps improving for long.
  std::vector<CurveTask> tasks = {CurveTask(1e-3, 1e-3, 1), CurveTask(8e-3, 1e-3, 30)};
  TaskSchedulerOptions options;
  options.objective = SchedulerObjective::EarlyStopping;
  options.early_stopping_rounds = 3;
  options.eps_greedy = 0;
  TaskScheduler scheduler(pointers(tasks), {1, 1}, {}, {}, options);
  scheduler.run(16 * 30);
  EXPECT_TRUE(scheduler.dead(0));
  EXPECT_FALSE(scheduler.dead(1));
  EXPECT_LE(tasks[0].rounds(), 4);
  // Stopped tasks count with their frozen latency and have no gradient.
  EXPECT_EQ(scheduler.gradients()[0], 0);
  // When every task has stopped, the run ends before the budget.
  std::vector<CurveTask> flat = {CurveTask(1e-3, 1e-3, 1), CurveTask(2e-3, 2e-3, 1)};
  TaskScheduler stops(pointers(flat), {}, {}, {}, options);
  EXPECT_LT(stops.run(16 * 100), 16 * 20);
}

TEST(TaskSchedulerTest, ATaskWithNothingNewIsDeadAndTheOthersGetItsRounds) {
  std::vector<CurveTask> tasks = {CurveTask(10e-3, 1e-3, 8, 1e9, 2), CurveTask(1e-3, 0.5e-3, 8)};
  TaskScheduler scheduler(pointers(tasks), {}, {}, {}, {});
  EXPECT_EQ(scheduler.run(16 * 20), 16 * 20);
  EXPECT_TRUE(scheduler.dead(0));
  EXPECT_EQ(tasks[0].rounds(), 2);
  EXPECT_EQ(tasks[1].rounds(), 18);
  // Every task dead: the run ends.
  std::vector<CurveTask> short_tasks = {CurveTask(1e-3, 0.5e-3, 8, 1e9, 1), CurveTask(1e-3, 0.5e-3, 8, 1e9, 2)};
  TaskScheduler ends(pointers(short_tasks), {}, {}, {}, {});
  EXPECT_EQ(ends.run(16 * 20), 16 * 3);
  EXPECT_FALSE(ends.step(16));
}

// A task whose every program fails (no latency ever).
class FailingTask : public SchedulerTask {
 public:
  int run_round(int n) override {
    ++rounds;
    return n;
  }
  double best_seconds() const override { return kUnmeasured; }
  double flop_count() const override { return 1e9; }
  int rounds = 0;
};

TEST(TaskSchedulerTest, ATaskWithoutAnyValidProgramIsGivenUp) {
  FailingTask failing;
  CurveTask good(1e-3, 0.5e-3, 8);
  TaskSchedulerOptions options;
  options.early_stopping_rounds = 4;
  TaskScheduler scheduler({&failing, &good}, {}, {}, {}, options);
  scheduler.run(16 * 20);
  EXPECT_TRUE(scheduler.dead(0));
  EXPECT_EQ(failing.rounds, 4);
  EXPECT_EQ(good.rounds(), 16);
}

TEST(TaskSchedulerTest, AnAlikeFasterTaskMakesTheSlowOneMorePromising) {
  // Tasks 0 and 1 do the same work; 1 already runs 4x faster. Task 2 is 0's twin without an
  // alike task. Neither improves: the optimistic guess -g/t alone would give 0 and 2 the same
  // rounds, but the similarity term keeps guessing that 0 can reach β times 1's time.
  auto make = [] { return std::vector<CurveTask>{CurveTask(8e-3, 8e-3, 1), CurveTask(2e-3, 2e-3, 1), CurveTask(8e-3, 8e-3, 1)}; };
  TaskSchedulerOptions options;
  options.eps_greedy = 0;
  std::vector<CurveTask> grouped = make();
  TaskScheduler with_groups(pointers(grouped), {}, {}, {"conv", "conv", "dense"}, options);
  with_groups.run(16 * 15);
  EXPECT_GT(grouped[0].rounds(), 2 * grouped[2].rounds());
  std::vector<CurveTask> alone = make();
  TaskScheduler without_groups(pointers(alone), {}, {}, {}, options);
  without_groups.run(16 * 15);
  EXPECT_LE(std::abs(alone[0].rounds() - alone[2].rounds()), 1);
}

TEST(TaskSchedulerTest, AResumedRunSkipsTheWarmUpAndCountsEarlierRounds) {
  std::vector<CurveTask> tasks = mixed_tasks();
  TaskScheduler scheduler(pointers(tasks), {}, {}, {}, {});
  // Earlier rounds of task 0 and 1 only: 2 and 3 still need their warm-up.
  scheduler.resume({{10e-3, 9e-3}, {1e-3, 1e-3, 1e-3}, {}, {}});
  EXPECT_EQ(scheduler.rounds(0), 2);
  EXPECT_EQ(scheduler.rounds(1), 3);
  EXPECT_EQ(scheduler.step(1000)->task, 2);
  EXPECT_EQ(scheduler.step(1000)->task, 3);
  EXPECT_THROW(scheduler.resume({{}}), std::invalid_argument);
}

TEST(TaskSchedulerTest, ObjectivesParseByBothNames) {
  EXPECT_EQ(parse_scheduler_objective("f1"), SchedulerObjective::WeightedLatency);
  EXPECT_EQ(parse_scheduler_objective("latency-requirement"), SchedulerObjective::LatencyRequirement);
  EXPECT_EQ(parse_scheduler_objective("f3"), SchedulerObjective::GeometricSpeedup);
  EXPECT_EQ(parse_scheduler_objective("early-stopping"), SchedulerObjective::EarlyStopping);
  EXPECT_EQ(scheduler_objective_name(SchedulerObjective::GeometricSpeedup), "geometric-speedup");
  try {
    parse_scheduler_objective("fastest");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fastest"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("f4 early-stopping"), std::string::npos);
  }
}

}  // namespace
}  // namespace ansor
