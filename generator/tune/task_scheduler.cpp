// The gradient-based task scheduler (paper §6.2) and round robin.
#include "tune/task_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ansor {

namespace {

struct ObjectiveName {
  SchedulerObjective objective;
  const char* short_name;
  const char* long_name;
};

constexpr ObjectiveName kObjectiveNames[] = {
    {SchedulerObjective::WeightedLatency, "f1", "weighted-latency"},
    {SchedulerObjective::LatencyRequirement, "f2", "latency-requirement"},
    {SchedulerObjective::GeometricSpeedup, "f3", "geometric-speedup"},
    {SchedulerObjective::EarlyStopping, "f4", "early-stopping"},
};

}  // namespace

SchedulerObjective parse_scheduler_objective(const std::string& name) {
  for (const ObjectiveName& n : kObjectiveNames)
    if (name == n.short_name || name == n.long_name) return n.objective;
  throw std::invalid_argument(fmt::format(
      "unknown scheduler objective '{}' (f1 weighted-latency, f2 latency-requirement, f3 geometric-speedup, f4 early-stopping)", name));
}

std::string scheduler_objective_name(SchedulerObjective objective) {
  for (const ObjectiveName& n : kObjectiveNames)
    if (n.objective == objective) return n.long_name;
  return "?";
}

TaskScheduler::TaskScheduler(std::vector<SchedulerTask*> tasks, std::vector<double> weights, std::vector<SchedulerNetwork> networks,
                             std::vector<std::string> similar, TaskSchedulerOptions options)
    : tasks_(std::move(tasks)),
      networks_(std::move(networks)),
      similar_(std::move(similar)),
      options_(options),
      history_(tasks_.size()),
      dead_(tasks_.size(), false),
      rng_(options.seed) {
  const int n = static_cast<int>(tasks_.size());
  if (!weights.empty() && static_cast<int>(weights.size()) != n) throw std::invalid_argument("one weight per task");
  if (!similar_.empty() && static_cast<int>(similar_.size()) != n) throw std::invalid_argument("one similarity group per task");
  if (options_.batch_size < 1) throw std::invalid_argument("the scheduler's batch size must be at least 1");
  if (options_.backward_window < 1) throw std::invalid_argument("the backward window must be at least 1 round");
  if (networks_.empty()) {
    SchedulerNetwork all{"all", {}, std::nullopt, std::nullopt};
    for (int i = 0; i < n; ++i) all.members.push_back({i, weights.empty() ? 1.0 : weights[i]});
    networks_.push_back(std::move(all));
  }
  for (const SchedulerNetwork& net : networks_) {
    for (const auto& [task, weight] : net.members) {
      if (task < 0 || task >= n) throw std::invalid_argument(fmt::format("network '{}' names task {} of {}", net.name, task, n));
      if (!(weight > 0)) throw std::invalid_argument(fmt::format("network '{}' gives task {} a weight that is not positive", net.name, task));
    }
    if (options_.objective == SchedulerObjective::GeometricSpeedup && !net.reference_seconds)
      throw std::invalid_argument(fmt::format("objective geometric-speedup needs a reference latency for network '{}'", net.name));
  }
}

void TaskScheduler::resume(const std::vector<std::vector<double>>& best_after_rounds) {
  if (best_after_rounds.size() != tasks_.size()) throw std::invalid_argument("one round history per task");
  for (size_t i = 0; i < tasks_.size(); ++i) history_[i].insert(history_[i].begin(), best_after_rounds[i].begin(), best_after_rounds[i].end());
}

double TaskScheduler::objective_at(const std::vector<double>& latencies) const {
  std::vector<double> network_latency;
  for (const SchedulerNetwork& net : networks_) {
    double sum = 0;
    for (const auto& [task, weight] : net.members) {
      double g = latencies[task];
      // Under f4 a task that stopped improving counts with its latency frozen where it stopped.
      if (options_.objective == SchedulerObjective::EarlyStopping && stopped_improving(task)) g = std::max(g, history_[task].back());
      sum += weight * g;
    }
    network_latency.push_back(sum);
  }
  double value = 0;
  switch (options_.objective) {
    case SchedulerObjective::WeightedLatency:
    case SchedulerObjective::EarlyStopping:
      for (double l : network_latency) value += l;
      return value;
    case SchedulerObjective::LatencyRequirement:
      for (size_t j = 0; j < networks_.size(); ++j) value += std::max(network_latency[j], networks_[j].latency_requirement.value_or(0.0));
      return value;
    case SchedulerObjective::GeometricSpeedup: {
      double log_sum = 0;
      for (size_t j = 0; j < networks_.size(); ++j) log_sum += std::log(*networks_[j].reference_seconds / network_latency[j]);
      return -std::exp(log_sum / static_cast<double>(networks_.size()));
    }
  }
  return value;
}

double TaskScheduler::objective_value() const {
  std::vector<double> latencies;
  for (const SchedulerTask* t : tasks_) latencies.push_back(t->best_seconds());
  return objective_at(latencies);
}

// ∂f/∂g_i by a one-sided difference downwards (tuning only lowers g_i): a term that a lower g_i
// no longer changes (a met requirement, a frozen task) gives 0.
double TaskScheduler::chain_gradient(int task, const std::vector<double>& latencies) const {
  double g = latencies[task];
  double delta = 1e-3 * g;
  std::vector<double> lower = latencies;
  lower[task] = g - delta;
  return (objective_at(latencies) - objective_at(lower)) / delta;
}

bool TaskScheduler::stopped_improving(int task) const {
  const std::vector<double>& h = history_[task];
  const size_t window = static_cast<size_t>(options_.early_stopping_rounds);
  if (h.size() <= window) return false;
  double before = h[h.size() - 1 - window], now = h.back();
  return std::isfinite(before) && now > before * (1 - options_.min_gain);
}

std::vector<double> TaskScheduler::gradients() const {
  const int n = static_cast<int>(tasks_.size());
  // A task without a latency yet (every program failed) leaves the objective infinite; the
  // others' gradients are taken as if it were not there.
  std::vector<double> latencies;
  for (const SchedulerTask* t : tasks_) {
    double g = t->best_seconds();
    latencies.push_back(std::isfinite(g) ? g : 0.0);
  }
  // The fastest speed (FLOP/s) among each group of alike tasks.
  std::map<std::string, double> fastest;
  for (int i = 0; i < n; ++i) {
    if (latencies[i] <= 0) continue;
    double& v = fastest[similar_.empty() ? std::to_string(i) : similar_[i]];
    v = std::max(v, tasks_[i]->flop_count() / latencies[i]);
  }
  std::vector<double> grads(n, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::vector<double>& h = history_[i];
    double g = latencies[i];
    if (dead_[i] || h.empty() || g <= 0) continue;
    const double t = static_cast<double>(h.size());
    const size_t window = static_cast<size_t>(options_.backward_window);
    // What the last Δt rounds gained, per round.
    double backward = h.size() > window ? (g - h[h.size() - 1 - window]) / static_cast<double>(window) : 0.0;
    // The optimistic guess: the next round gains the average of all earlier ones, or brings the
    // task to β times the time it would take at the speed of its fastest alike task.
    double forward = -g / t;
    auto group = fastest.find(similar_.empty() ? std::to_string(i) : similar_[i]);
    if (group != fastest.end() && group->second > 0)
      forward = std::min(forward, options_.beta * tasks_[i]->flop_count() / group->second - g);
    grads[i] = chain_gradient(i, latencies) * (options_.alpha * backward + (1 - options_.alpha) * forward);
  }
  return grads;
}

TaskScheduler::Choice TaskScheduler::choose() {
  const int n = static_cast<int>(tasks_.size());
  std::vector<int> live;
  for (int i = 0; i < n; ++i)
    if (!dead_[i]) live.push_back(i);
  if (live.empty()) return {-1, false};
  // Warm-up: every task gets a round before any gets a second; then tasks still without a
  // latency (all their programs failed so far) go first until they are given up.
  for (int i : live)
    if (history_[i].empty()) return {i, false};
  for (int i : live)
    if (!std::isfinite(tasks_[i]->best_seconds())) return {i, false};
  if (options_.strategy == SchedulingStrategy::RoundRobin) {
    for (int k = 0; k < n; ++k) {
      int i = (next_robin_ + k) % n;
      if (!dead_[i]) {
        next_robin_ = (i + 1) % n;
        return {i, false};
      }
    }
    return {-1, false};
  }
  std::vector<double> grads = gradients();
  int best = -1;
  for (int i : live)
    if (grads[i] < 0 && (best < 0 || grads[i] < grads[best])) best = i;
  // No task can lower the objective any more (requirements met, every task stopped): done.
  if (best < 0) return {-1, false};
  if (std::uniform_real_distribution<double>(0, 1)(rng_) < options_.eps_greedy)
    return {live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng_)], true};
  return {best, false};
}

void TaskScheduler::give_round(int task, int max_trials, SchedulerRound& round) {
  round.task = task;
  round.measured = tasks_[task]->run_round(std::min(options_.batch_size, max_trials));
  if (round.measured == 0) {
    dead_[task] = true;  // nothing new to try
    return;
  }
  history_[task].push_back(tasks_[task]->best_seconds());
  trials_ += round.measured;
  // Given up: still no valid program after the early-stopping window; under f4, stopped improving.
  const bool no_latency = !std::isfinite(tasks_[task]->best_seconds()) && rounds(task) >= options_.early_stopping_rounds;
  if (no_latency || (options_.objective == SchedulerObjective::EarlyStopping && stopped_improving(task))) dead_[task] = true;
}

std::optional<SchedulerRound> TaskScheduler::step(int max_trials) {
  if (max_trials <= 0) return std::nullopt;
  for (;;) {
    Choice choice = choose();
    if (choice.task < 0) return std::nullopt;
    SchedulerRound round;
    round.random_choice = choice.random;
    give_round(choice.task, max_trials, round);
    if (round.measured > 0) return round;
  }
}

int TaskScheduler::run(int total_trials, const std::function<void(const SchedulerRound&)>& on_round) {
  const int start = trials_;
  while (trials_ - start < total_trials) {
    std::optional<SchedulerRound> round = step(total_trials - (trials_ - start));
    if (!round) break;
    if (on_round) on_round(*round);
  }
  return trials_ - start;
}

}  // namespace ansor
