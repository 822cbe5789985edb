// ansor-gen tune: measures schedules and appends their records to the cache, the kernels
// sharing one budget through the task scheduler, or the named kernels one after the other.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "driver/scheduled_tuning.h"
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

// Without --kernel: the task scheduler shares one budget among all kernels.
void tune_all(const Program& program, const TuneCommand& c, TuningSessions& sessions, std::ostream& out) {
  ScheduledTuningOptions scheduled;
  scheduled.tune = c.tune;
  scheduled.scheduler.strategy = c.strategy == "gradient" ? SchedulingStrategy::Gradient : SchedulingStrategy::RoundRobin;
  scheduled.scheduler.objective = parse_scheduler_objective(c.objective);
  if (c.total_trials) {
    scheduled.total_trials = *c.total_trials;
  } else {
    for (const Kernel& k : program.kernels) scheduled.total_trials += c.trials_given ? c.tune.trials : static_cast<int>(k.attrs.trials.value_or(64));
  }
  print_scheduled_summary(tune_scheduled(program, sessions, scheduled, out), out);
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
  return {cmd, [c, &input](const Program& program, std::ostream& out) {
            c->session.flags = split_flags(c->flags_text);
            for (const std::string& name : c->kernels) find_kernel(program, name, input.def_path);
            if (c->total_trials && !c->kernels.empty()) throw UsageError("--total-trials is for a run without --kernel");
            TuningSessions sessions(c->session);
            c->kernels.empty() ? tune_all(program, *c, sessions, out) : tune_each(program, *c, sessions, out);
          }};
}

}  // namespace ansor::cli
