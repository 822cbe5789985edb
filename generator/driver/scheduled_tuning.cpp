// A kernels.def tuned under one budget by the task scheduler.
#include "driver/scheduled_tuning.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "driver/shard_plan.h"
#include "tune/kernel_scheduling.h"

namespace ansor {

namespace {

std::string describe_duration(double seconds) {
  long s = std::lround(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string describe_objective(SchedulerObjective objective, double value) {
  if (!std::isfinite(value)) return "not known yet";
  if (objective == SchedulerObjective::GeometricSpeedup) return fmt::format("geometric mean speed-up {:.2f}x", -value);
  return fmt::format("{} {:.3f} ms", scheduler_objective_name(objective), value * 1e3);
}

// The scheduler's networks over the tuned kernels (task indices): the program's networks, and a
// network of its own for each kernel in none. Without networks: none (the weights serve).
std::vector<SchedulerNetwork> scheduler_networks(const Program& program, const std::map<std::string, int>& task_of,
                                                 const std::vector<const Kernel*>& tasks) {
  std::vector<SchedulerNetwork> networks;
  if (program.networks.empty()) return networks;
  std::vector<bool> in_network(tasks.size(), false);
  for (const Network& n : program.networks) {
    SchedulerNetwork net{n.name, {}, std::nullopt, std::nullopt};
    if (n.latency_ms) net.latency_requirement = *n.latency_ms * 1e-3;
    if (n.reference_ms) net.reference_seconds = *n.reference_ms * 1e-3;
    for (const NetworkMember& m : n.members) {
      auto it = task_of.find(m.kernel);
      if (it == task_of.end()) continue;  // not tuned here (another device)
      net.members.push_back({it->second, m.count});
      in_network[it->second] = true;
    }
    if (!net.members.empty()) networks.push_back(std::move(net));
  }
  for (size_t i = 0; i < tasks.size(); ++i)
    if (!in_network[i])
      networks.push_back({fmt::format("{} (in no network)", tasks[i]->name), {{static_cast<int>(i), tasks[i]->attrs.weight}}, std::nullopt,
                          std::nullopt});
  return networks;
}

}  // namespace

std::vector<ScheduledKernel> tune_scheduled(const Program& program, TuningSessions& sessions, const ScheduledTuningOptions& options,
                                            std::ostream& progress) {
  std::vector<ScheduledKernel> rows;
  std::vector<const Kernel*> kernels;  // one per task
  std::vector<size_t> row_of;          // task index -> row
  std::map<std::string, int> task_of;
  std::vector<std::unique_ptr<TuningTask>> tasks;
  TuneOptions per_kernel = options.tune;
  per_kernel.trials = std::max(0, options.total_trials);
  per_kernel.shared_budget = true;
  int earlier = 0;
  for (const Kernel& k : program.kernels) {
    ScheduledKernel row{k.name, kernel_weight(program, k), k.dag.flop_count(), 0, 0, std::nullopt, std::nullopt, ""};
    TuningSession& session = sessions.for_kernel(k);
    if (!session.cannot_measure().empty()) {
      row.skipped = "not tuned: " + session.cannot_measure();
      rows.push_back(row);
      continue;
    }
    std::unique_ptr<TuningTask> task = session.task(k, per_kernel);
    row.earlier_trials = static_cast<int>(task->summary().earlier_seconds.size());
    earlier += row.earlier_trials;
    task_of[k.name] = static_cast<int>(tasks.size());
    kernels.push_back(&k);
    row_of.push_back(rows.size());
    tasks.push_back(std::move(task));
    rows.push_back(row);
  }

  std::vector<std::unique_ptr<KernelSchedulerTask>> adapters;
  std::vector<SchedulerTask*> scheduled;
  std::vector<double> weights;
  std::vector<std::string> alike;
  std::vector<std::vector<double>> history;
  for (size_t i = 0; i < tasks.size(); ++i) {
    adapters.push_back(std::make_unique<KernelSchedulerTask>(*tasks[i], kernels[i]->dag.flop_count(), progress));
    scheduled.push_back(adapters.back().get());
    weights.push_back(kernels[i]->attrs.weight);
    alike.push_back(structure_key(kernels[i]->dag));
    history.push_back(round_history(tasks[i]->summary().earlier_seconds, options.tune.batch_size));
  }
  TaskSchedulerOptions scheduler_options = options.scheduler;
  scheduler_options.batch_size = options.tune.batch_size;
  scheduler_options.seed = options.tune.seed;
  TaskScheduler scheduler(scheduled, weights, scheduler_networks(program, task_of, kernels), alike, scheduler_options);
  scheduler.resume(history);

  if (tasks.empty()) {
    // Nothing can be measured here (a GPU target without its GPU): one line says why.
    std::set<std::string> reasons;
    for (const ScheduledKernel& row : rows) reasons.insert(row.skipped.substr(row.skipped.find(':') + 2));
    fmt::print(progress, "[schedule] no kernel of {} is tuned here: {}\n", program.source->path, fmt::join(reasons, "; "));
    return rows;
  }
  const int left = options.total_trials - earlier;
  std::set<std::string> targets;
  for (const Kernel* k : kernels) targets.insert(sessions.for_kernel(*k).target().to_string());
  fmt::print(progress, "[schedule] {} kernel{} on {}, {} trials in all ({} in the cache, {} to go), {} scheduler, objective {}\n", tasks.size(),
             tasks.size() == 1 ? "" : "s", fmt::join(targets, " and "), options.total_trials, earlier, std::max(0, left),
             scheduler_options.strategy == SchedulingStrategy::Gradient ? "gradient" : "round-robin",
             scheduler_objective_name(scheduler_options.objective));
  if (left <= 0 || tasks.empty()) {
    if (!tasks.empty())
      fmt::print(progress, "[schedule] the budget is spent: the cache holds {} trials of these kernels; a larger --trials or --total-trials tunes on\n",
                 earlier);
  } else {
    auto start = std::chrono::steady_clock::now();
    int done = 0;
    scheduler.run(left, [&](const SchedulerRound& round) {
      done += round.measured;
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double eta = elapsed / done * (left - done);
      fmt::print(progress, "[schedule] {}/{} trials; round to {}{}; {} elapsed, about {} left; {}\n", earlier + done, options.total_trials,
                 kernels[round.task]->name, round.random_choice ? " (ε-greedy)" : "", describe_duration(elapsed), describe_duration(eta),
                 describe_objective(scheduler_options.objective, scheduler.objective_value()));
      progress.flush();
    });
    for (size_t i = 0; i < tasks.size(); ++i)
      if (scheduler.dead(static_cast<int>(i)))
        fmt::print(progress, "[schedule] {}: stopped after {} trials ({})\n", kernels[i]->name, tasks[i]->summary().measured,
                   std::isfinite(adapters[i]->best_seconds()) ? "no new schedules, or no gain to expect" : "no schedule ran correctly");
  }
  for (const std::unique_ptr<TuningTask>& task : tasks) task->confirm_best(progress);
  for (size_t i = 0; i < tasks.size(); ++i) {
    ScheduledKernel& row = rows[row_of[i]];
    const TuneSummary& summary = tasks[i]->summary();
    row.trials = summary.measured;
    if (summary.best) row.best_seconds = summary.best->seconds;
    row.default_seconds = summary.default_seconds;
  }
  return rows;
}

void print_scheduled_summary(const std::vector<ScheduledKernel>& kernels, std::ostream& out) {
  if (std::all_of(kernels.begin(), kernels.end(), [](const ScheduledKernel& k) { return !k.skipped.empty(); })) return;
  fmt::print(out, "\n{:<28} {:>7} {:>10} {:>11} {:>10} {:>8}\n", "kernel", "weight", "GFLOP/s", "vs default", "trials", "earlier");
  for (const ScheduledKernel& k : kernels) {
    if (!k.skipped.empty()) {
      fmt::print(out, "{:<28} {:>7.3g}  {}\n", k.name, k.weight, k.skipped);
      continue;
    }
    std::string gflops = k.best_seconds ? fmt::format("{:.1f}", k.flops / *k.best_seconds / 1e9) : "-";
    std::string speedup = k.best_seconds && k.default_seconds ? fmt::format("{:.2f}x", *k.default_seconds / *k.best_seconds) : "-";
    fmt::print(out, "{:<28} {:>7.3g} {:>10} {:>11} {:>10} {:>8}\n", k.name, k.weight, gflops, speedup, k.trials, k.earlier_trials);
  }
}

}  // namespace ansor
