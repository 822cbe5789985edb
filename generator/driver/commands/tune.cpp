// ansor-gen tune: measures schedules and appends their records to the cache, the kernels (of
// one shard, driver/shard_plan.h) sharing one budget through the task scheduler, or the named
// kernels one after the other.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>

#include "driver/scheduled_tuning.h"
#include "driver/shard_plan.h"
#include "tune/search_policy.h"

namespace ansor::cli {

namespace {

struct TuneCommand {
  SessionOptions session;
  std::string flags_text;
  TuneOptions tune;
  std::vector<std::string> kernels;
  bool trials_given = false;
  std::optional<int> total_trials;
  std::string strategy = "gradient", objective = "f1";
  std::optional<std::string> shard_text;
};

// Accepts the names of the search policy registry.
CLI::Validator known_policy() {
  return CLI::Validator(
    [](std::string& name) {
      std::vector<std::string> names = search_policy_names();
      if (std::find(names.begin(), names.end(), name) != names.end()) return std::string();
      return fmt::format("unknown search policy '{}'; the policies are: {}", name, fmt::join(names, ", "));
    },
    "POLICY");
}

// Each kernel's trials: --trials, else its `trials` attribute, else 64; with --total-trials,
// that budget in proportion to them.
std::vector<int> kernel_budgets(const Program& program, const TuneCommand& c) {
  std::vector<int> trials = kernel_trials(program, c.trials_given ? std::optional<int>(c.tune.trials) : std::nullopt);
  return c.total_trials ? apportion_trials(trials, *c.total_trials) : trials;
}

// Without --kernel: the task scheduler shares one budget among the kernels (of the shard).
void tune_all(const Program& program, int total_trials, const TuneCommand& c, TuningSessions& sessions, std::ostream& out) {
  ScheduledTuningOptions scheduled;
  scheduled.tune = c.tune;
  scheduled.scheduler.strategy = c.strategy == "gradient" ? SchedulingStrategy::Gradient : SchedulingStrategy::RoundRobin;
  scheduled.scheduler.objective = parse_scheduler_objective(c.objective);
  scheduled.total_trials = total_trials;
  print_scheduled_summary(tune_scheduled(program, sessions, scheduled, out), out);
}

// One shard of the file: its kernels under their part of the budget.
void tune_shard(const Program& program, const ShardSpec& shard, const TuneCommand& c, TuningSessions& sessions, std::ostream& out) {
  const std::vector<int> trials = kernel_budgets(program, c);
  const ShardPlan plan = plan_shards(program, trials, shard.count);
  const Program part = shard_program(program, plan, shard.index);
  std::vector<std::string> names;
  for (const Kernel& k : part.kernels) names.push_back(k.name);
  const double total_cost = std::accumulate(plan.cost.begin(), plan.cost.end(), 0.0);
  const size_t index = static_cast<size_t>(shard.index);
  fmt::print(out, "[shard] {}/{} ({}): {} of {} kernels, {} of {} trials, {:.1f}% of the expected cost (largest shard {:.2f}x the mean){}{}\n",
             shard.index, shard.count, shard.source, part.kernels.size(), program.kernels.size(), plan.shard_trials[index],
             std::accumulate(trials.begin(), trials.end(), 0), total_cost > 0 ? 100 * plan.shard_cost[index] / total_cost : 0.0,
             plan.imbalance(), names.empty() ? "" : ": ", fmt::join(names, ", "));
  if (part.kernels.empty()) {
    fmt::print(out, "[shard] nothing to tune: the file has fewer kernels than shards\n");
    return;
  }
  tune_all(part, plan.shard_trials[index], c, sessions, out);
}

// The shard of the run: --shard, else the job engine's environment variables, else none.
std::optional<ShardSpec> run_shard(const TuneCommand& c) {
  try {
    if (c.shard_text) return parse_shard(*c.shard_text);
    if (!c.kernels.empty()) return std::nullopt;  // the named kernels, whatever the job engine's split
    return shard_from_environment([](const char* name) { return std::getenv(name); });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// With --kernel: each named kernel for its trials, one after the other.
void tune_each(const Program& program, const TuneCommand& c, TuningSessions& sessions, std::ostream& out) {
  for (const Kernel& k : program.kernels) {
    if (std::find(c.kernels.begin(), c.kernels.end(), k.name) == c.kernels.end()) continue;
    TuneOptions opts = c.tune;
    if (!c.trials_given) opts.trials = static_cast<int>(k.attrs.trials.value_or(64));
    TuningSession& session = sessions.for_kernel(k);
    if (!session.cannot_measure().empty()) throw std::runtime_error(session.cannot_measure());
    fmt::print(out, "[tune] {}: {} trials on {} with {}\n", k.name, opts.trials, session.target().to_string(), session.compiler().identity());
    session.tune(k, opts, out);
  }
}

}  // namespace

Subcommand add_tune(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(
      app, input, "tune",
      "Measure schedules and append the records to the cache. Without --kernel, the task scheduler shares one budget among the "
      "kernels (trials in the cache count, so a restarted run continues); with --kernel, each is tuned for --trials more.");
  auto c = std::make_shared<TuneCommand>();
  add_session_options(*cmd, c->session, c->flags_text);
  cmd->get_option("--cache")->required();
  cmd->add_option("--kernel", c->kernels, "tune only these kernels, one after the other (repeatable)");
  cmd->add_option_function<int>("--trials", [c](int n) { c->tune.trials = n; c->trials_given = true; },
                                "schedules per kernel (without --kernel: on average; default: each kernel's trials attribute, else 64)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--total-trials", c->total_trials, "without --kernel: the budget of all kernels together")->check(CLI::NonNegativeNumber);
  cmd->add_option("--shard", c->shard_text,
                  "I/N: tune shard I (from 0) of N, a deterministic part of the kernels balanced by expected cost; without it, "
                  "ANSOR_SHARD=I/N, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with ANSOR_SHARD_COUNT=N, or a Slurm array's "
                  "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT choose it when set");
  cmd->add_option("--scheduler", c->strategy, "without --kernel: gradient | round-robin")
      ->check(CLI::IsMember({"gradient", "round-robin"}))
      ->capture_default_str();
  cmd->add_option("--objective", c->objective,
                  "without --kernel: f1 (weighted latency) | f2 (latency requirements) | f3 (geometric mean speed-up) | f4 (early stopping)")
      ->check(CLI::IsMember({"f1", "f2", "f3", "f4", "weighted-latency", "latency-requirement", "geometric-speedup", "early-stopping"}))
      ->capture_default_str();
  cmd->add_option("--policy", c->tune.policy, fmt::format("search policy: {}", fmt::join(search_policy_names(), " | ")))
      ->check(known_policy())
      ->capture_default_str();
  cmd->add_option("--seed", c->tune.seed, "seed of the search");
  cmd->add_option("--transfer-seeds", c->tune.transfer_seeds,
                  "a kernel with no record of its own first measures up to this many schedules of the same computation at other "
                  "shapes in the cache, mapped to its own (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--confirm", c->tune.confirm_schedules,
                  "at the end, measure this many of each kernel's fastest schedules again until each has 3 measurements; a schedule "
                  "counts at their median (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--batch", c->tune.batch_size, "schedules measured per batch")->capture_default_str();
  cmd->add_option("--min-seconds", c->session.min_seconds, "timed calls of a candidate add up to at least this")->capture_default_str();
  cmd->add_option("--early-stop", c->session.early_stop_factor,
                  "FACTOR: a candidate whose first timed call is FACTOR times slower than the best so far is not timed further (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  return with_program(cmd, input, [c, &input](const Program& program, std::ostream& out) {
            c->session.flags = split_flags(c->flags_text);
            for (const std::string& name : c->kernels) find_kernel(program, name, input.def_path);
            if (c->total_trials && !c->kernels.empty()) throw UsageError("--total-trials is for a run without --kernel");
            if (c->shard_text && !c->kernels.empty()) throw UsageError("--shard is for a run without --kernel");
            std::optional<ShardSpec> shard = run_shard(*c);
            TuningSessions sessions(c->session);
            if (!c->kernels.empty()) {
              tune_each(program, *c, sessions, out);
            } else if (shard) {
              tune_shard(program, *shard, *c, sessions, out);
            } else {
              const std::vector<int> trials = kernel_budgets(program, *c);
              tune_all(program, c->total_trials.value_or(std::accumulate(trials.begin(), trials.end(), 0)), *c, sessions, out);
            }
          });
}

}  // namespace ansor::cli
