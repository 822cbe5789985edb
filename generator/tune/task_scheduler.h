// The task scheduler of the paper's §6: across the kernels of one kernels.def (the tasks), which
// one gets the next round of measurements. The gradient strategy estimates, for every task, how
// much one more round would lower the objective (the end-to-end cost of the networks the tasks
// belong to) and gives the round to the task where that is largest; round robin takes turns.
//
// The scheduler sees a task only through SchedulerTask (a round, its best time, its FLOPs), so
// it drives kernel tuning (TuningTask, through tuning_scheduler.h) and the synthetic tasks of its
// tests alike.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace ansor {

// One task as the scheduler sees it.
class SchedulerTask {
 public:
  virtual ~SchedulerTask() = default;
  // Measures up to n new programs; returns how many (0: the task has nothing new to try).
  virtual int run_round(int n) = 0;
  // The best latency found so far in seconds; +infinity while there is none.
  virtual double best_seconds() const = 0;
  // Floating-point operations of one call (the paper's C_i).
  virtual double flop_count() const = 0;
};

// The objective functions of the paper's table 2, over networks j of tasks S(j) with weights
// w_i and best latencies g_i: f1 the sum of the networks' latencies, f2 the same with each
// network's latency counted no lower than its requirement L_j, f3 minus the geometric mean of
// the speed-ups over reference latencies B_j, f4 the sum of latencies with per-task early
// stopping (a task whose best has not improved for `early_stopping_rounds` of its rounds counts
// with its latency frozen).
enum class SchedulerObjective { WeightedLatency, LatencyRequirement, GeometricSpeedup, EarlyStopping };

// "f1" / "weighted-latency", "f2" / "latency-requirement", "f3" / "geometric-speedup",
// "f4" / "early-stopping"; std::invalid_argument naming the known ones for anything else.
SchedulerObjective parse_scheduler_objective(const std::string& name);
std::string scheduler_objective_name(SchedulerObjective objective);

// A network: tasks (by index) with how often each runs per inference; with a latency
// requirement for f2 and a reference latency for f3, in seconds.
struct SchedulerNetwork {
  std::string name;
  std::vector<std::pair<int, double>> members;  // task index, weight (repeat count)
  std::optional<double> latency_requirement;
  std::optional<double> reference_seconds;
};

enum class SchedulingStrategy { Gradient, RoundRobin };

// The parameters, with the paper's defaults (appendix) where it gives them.
struct TaskSchedulerOptions {
  SchedulingStrategy strategy = SchedulingStrategy::Gradient;
  SchedulerObjective objective = SchedulerObjective::WeightedLatency;
  int batch_size = 16;             // trials per round (one unit of time)
  double alpha = 0.2;              // weight of the backward (observed) gradient against the optimistic guess
  double beta = 2.0;               // trust in the speed of similar tasks
  int backward_window = 3;         // Δt, in rounds
  double eps_greedy = 0.05;        // chance that a round goes to a random live task
  int early_stopping_rounds = 8;   // f4, and dead-task detection under every objective: rounds without a gain of min_gain
  double min_gain = 0.005;         // a relative improvement below this is no improvement
  uint64_t seed = 0;
};

// What the scheduler tells its caller after every round it gives out.
struct SchedulerRound {
  int task = 0;
  int measured = 0;
  bool random_choice = false;  // chosen by the ε-greedy draw
};

class TaskScheduler {
 public:
  // Tasks must outlive the scheduler. `networks` empty: one network of every task with weight
  // `weights[i]` (1 when weights is empty). `similar[i]` names a group of alike tasks (same
  // computation, other shapes): the paper's N(i); empty: each task alone.
  TaskScheduler(std::vector<SchedulerTask*> tasks, std::vector<double> weights, std::vector<SchedulerNetwork> networks,
                std::vector<std::string> similar, TaskSchedulerOptions options);

  // Tells the scheduler of rounds the tasks had before this run (a resumed run): for each task,
  // the best latency after each of its earlier rounds, oldest first.
  void resume(const std::vector<std::vector<double>>& best_after_rounds);

  // Gives rounds out until `total_trials` trials were measured in this run or every task is
  // dead. `on_round` (optional) is called after each round. Returns the trials measured.
  int run(int total_trials, const std::function<void(const SchedulerRound&)>& on_round = {});

  // Gives out one round; nullopt when every task is dead. Exposed for tests and for callers
  // that interleave their own work.
  std::optional<SchedulerRound> step(int max_trials);

  // The objective's value at the tasks' current best latencies (lower is better; +infinity
  // while a task of a network has no latency).
  double objective_value() const;
  // The estimated ∂f/∂t_i of every task (0 for dead ones): what the gradient strategy ranks.
  std::vector<double> gradients() const;

  int rounds(int task) const { return static_cast<int>(history_[task].size()); }
  bool dead(int task) const { return dead_[task]; }
  int trials_measured() const { return trials_; }

 private:
  double objective_at(const std::vector<double>& latencies) const;
  double chain_gradient(int task, const std::vector<double>& latencies) const;
  bool stopped_improving(int task) const;
  struct Choice {
    int task;     // -1: none
    bool random;  // by the ε-greedy draw
  };
  Choice choose();
  void give_round(int task, int max_trials, SchedulerRound& round);

  std::vector<SchedulerTask*> tasks_;
  std::vector<SchedulerNetwork> networks_;
  std::vector<std::string> similar_;
  TaskSchedulerOptions options_;
  std::vector<std::vector<double>> history_;  // best latency after each round, per task
  std::vector<bool> dead_;
  int next_robin_ = 0;
  int trials_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace ansor
