// ansor-gen subcommands: check, list, emit, tune, sketch, configure, lower, features.
#include "driver/cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "backend/backend_registry.h"
#include "codegen/c_names.h"
#include "codegen/kernel_signature.h"
#include "driver/library_emitter.h"
#include "driver/scheduled_tuning.h"
#include "driver/tuning_session.h"
#include "features/features.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "sampler/sketch_generator.h"
#include "schedule/state_printer.h"
#include "support/version.h"
#include "tune/search_policy.h"

namespace ansor {

namespace {

constexpr int kExitBadInput = 1;
constexpr int kExitMisuse = 2;

// Misuse that the argument parser cannot see (an invalid library name, ...).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string tensor_text(const ParamDecl& p) { return fmt::format("{} {}[{}]", p.tensor, dtype_name(p.dtype), fmt::join(p.shape, ", ")); }

void list_kernels(const Program& program, bool json, std::ostream& out) {
  if (json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const Kernel& k : program.kernels) {
      nlohmann::json jk;
      jk["name"] = k.name;
      jk["workload_key"] = k.dag.workload_key();
      jk["flops"] = k.dag.flop_count();
      jk["weight"] = k.attrs.weight;
      if (k.attrs.trials) jk["trials"] = *k.attrs.trials;
      if (k.attrs.target) jk["target"] = *k.attrs.target;
      for (const ParamDecl& p : kernel_params(k.dag)) {
        nlohmann::json jt{{"name", p.tensor}, {"dtype", std::string(dtype_name(p.dtype))}, {"shape", p.shape}};
        if (!p.is_output) jt["const"] = p.is_const;
        jk[p.is_output ? "outputs" : "inputs"].push_back(jt);
      }
      doc.push_back(jk);
    }
    out << doc.dump(2) << "\n";
    return;
  }
  for (const Kernel& k : program.kernels) {
    std::vector<std::string> ins, outs;
    for (const ParamDecl& p : kernel_params(k.dag)) (p.is_output ? outs : ins).push_back(tensor_text(p));
    fmt::print(out, "{}\n  inputs:   {}\n  outputs:  {}\n  flops:    {:.0f}\n  workload: {}\n", k.name, fmt::join(ins, ", "),
               fmt::join(outs, ", "), k.dag.flop_count(), k.dag.workload_key());
    std::string attrs = fmt::format("weight {}", k.attrs.weight);
    if (k.attrs.trials) attrs += fmt::format(", trials {}", *k.attrs.trials);
    if (k.attrs.target) attrs += fmt::format(", target {}", *k.attrs.target);
    fmt::print(out, "  attrs:    {}\n", attrs);
  }
}

std::vector<std::string> split_flags(const std::string& text) {
  std::vector<std::string> flags;
  std::istringstream in(text);
  std::string f;
  while (in >> f) flags.push_back(f);
  return flags;
}

void check_lib_name(const std::string& name) {
  if (!is_valid_c_identifier(name) || is_c_keyword(name))
    throw UsageError(fmt::format("--name '{}' must be a C identifier (letters, digits and '_', not starting with a digit)", name));
}

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

const std::map<std::string, ScheduleKind> kScheduleNames = {
    {"best", ScheduleKind::Best}, {"default", ScheduleKind::Default}, {"naive", ScheduleKind::Naive}, {"random", ScheduleKind::Random}};

// A schedule to print (`lower`): the naive program, or the default or a random one for the target.
State schedule_for_printing(const std::shared_ptr<const ComputeDAG>& dag, const std::string& schedule, uint64_t seed,
                            const std::string& target_name) {
  if (schedule == "naive") return State(dag);
  const SamplerContext ctx = sampler_context_for(target_name == "host" ? Target{} : parse_target(target_name));
  return schedule == "default" ? default_schedule(dag, ctx) : random_program(dag, ctx, seed);
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"ansor-gen: generates tuned tensor kernels from kernels.def"};
  app.set_version_flag("--version", std::string("ansor-gen ") + kGeneratorVersion);
  app.require_subcommand(1);

  std::string def_path;
  auto add_def = [&](CLI::App* cmd) { cmd->add_option("DEF", def_path, "the kernels.def file")->required(); };

  CLI::App* check = app.add_subcommand("check", "Parse and validate kernels.def");
  add_def(check);

  bool json = false;
  CLI::App* list = app.add_subcommand("list", "List each kernel with its inputs, outputs, shapes and FLOPs");
  add_def(list);
  list->add_flag("--json", json, "print JSON");

  EmitOptions emit_opts;
  std::string schedule_name = "best";
  CLI::App* emit = app.add_subcommand("emit", "Write the library's header and sources");
  add_def(emit);
  emit->add_option("--name", emit_opts.lib_name, "library name: the prefix of every symbol")->required();
  emit->add_option("--out", emit_opts.out_dir, "output directory")->required();
  std::string flags_text;
  auto add_session = [&](CLI::App* cmd, SessionOptions& s) {
    cmd->add_option("--cache", s.cache_dir, "directory of tuning records");
    cmd->add_option("--target", s.target, "host or a target string (cpu:ARCH:CPU:ISA:tTHREADS)")->capture_default_str();
    cmd->add_option("--compiler", s.compiler, "C++ compiler of the kernels (default clang++)");
    cmd->add_option("--flags", flags_text, "kernel compiler flags, space separated (default: -O3 -march=native ...)");
  };
  add_session(emit, emit_opts.session);
  emit->add_option("--trials", emit_opts.trials, "with --schedule best: tune kernels without a record for this many trials");
  emit->add_option("--schedule", schedule_name, "best | default | naive | random")
      ->check(CLI::IsMember({"best", "default", "naive", "random"}))
      ->capture_default_str();
  emit->add_option("--seed", emit_opts.seed, "seed of --schedule random");
  emit->add_option("--kernel", emit_opts.kernels, "emit only these kernels' sources (repeatable)");
  emit->add_flag("--header-only", emit_opts.header_only, "write only the header and the registry");
  emit->add_option("--tune-hint", emit_opts.tune_hint, "with --stamps-only: the command that tunes, named in the untuned-kernels line");
  emit->add_flag("--stamps-only", emit_opts.stamps_only,
                 "write only DIR/stamps/LIB_KERNEL.stamp, the records --schedule best would try, where they changed (the build's trigger to re-emit)");

  SessionOptions tune_session;
  TuneOptions tune_opts;
  std::vector<std::string> tune_kernels;
  std::string fault_plan;
  bool trials_given = false;
  std::optional<int> total_trials;
  ScheduledTuningOptions scheduled;
  std::string strategy_name = "gradient", objective_name = "f1";
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Measure schedules and append the records to the cache. Without --kernel, the task scheduler shares one budget among the "
      "kernels (trials in the cache count, so a restarted run continues); with --kernel, each is tuned for --trials more.");
  add_def(tune);
  add_session(tune, tune_session);
  tune->get_option("--cache")->required();
  tune->add_option("--kernel", tune_kernels, "tune only these kernels, one after the other (repeatable)");
  tune->add_option_function<int>("--trials", [&](int n) { tune_opts.trials = n; trials_given = true; },
                                 "schedules per kernel (without --kernel: on average; default: each kernel's trials attribute, else 64)")
      ->check(CLI::NonNegativeNumber);
  tune->add_option("--total-trials", total_trials, "without --kernel: the budget of all kernels together")->check(CLI::NonNegativeNumber);
  tune->add_option("--scheduler", strategy_name, "without --kernel: gradient | round-robin")
      ->check(CLI::IsMember({"gradient", "round-robin"}))
      ->capture_default_str();
  tune->add_option("--objective", objective_name,
                   "without --kernel: f1 (weighted latency) | f2 (latency requirements) | f3 (geometric mean speed-up) | f4 (early stopping)")
      ->check(CLI::IsMember({"f1", "f2", "f3", "f4", "weighted-latency", "latency-requirement", "geometric-speedup", "early-stopping"}))
      ->capture_default_str();
  tune->add_option("--policy", tune_opts.policy, fmt::format("search policy: {}", fmt::join(search_policy_names(), " | ")))
      ->check(known_policy())
      ->capture_default_str();
  tune->add_option("--seed", tune_opts.seed, "seed of the search");
  tune->add_option("--batch", tune_opts.batch_size, "schedules measured per batch")->capture_default_str();
  tune->add_option("--min-seconds", tune_session.min_seconds, "timed calls of a candidate add up to at least this")->capture_default_str();
  tune->add_option("--early-stop", tune_session.early_stop_factor,
                   "FACTOR: a candidate whose first timed call is FACTOR times slower than the best so far is not timed further (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  tune->add_option("--fault-plan", fault_plan, "testing only: plant faults in candidates, e.g. 3:crash,5:hang")->group("Testing");

  std::string sketch_kernel, sketch_target = "host";
  CLI::App* sketch = app.add_subcommand("sketch", "Print the sketches of a kernel, as loop nests, with the rules that derived them");
  add_def(sketch);
  sketch->add_option("--kernel", sketch_kernel, "the kernel")->required();
  sketch->add_option("--target", sketch_target, "host, cuda:sm_XX or a CPU target string")->capture_default_str();

  std::string lib_name, out_dir;
  CLI::App* configure = app.add_subcommand("configure", "What a build needs at configure time: header, registry, per-kernel fragments");
  add_def(configure);
  configure->add_option("--name", lib_name, "library name")->required();
  configure->add_option("--out", out_dir, "output directory")->required();
  std::vector<std::string> configure_targets = {"host"};
  std::string configure_compiler, configure_flags, configure_runtime_include;
  configure->add_option("--target", configure_targets,
                        "the build's target, checked here so that a bad one fails at configure time; repeated: a library for several "
                        "CPU targets, dispatched at run time")
      ->capture_default_str();
  configure->add_option("--compiler", configure_compiler, "the kernel compiler the build uses (with several targets, asked which CPU features each uses)");
  configure->add_option("--flags", configure_flags, "the kernel flags (default: the target's, -O3 -march=native ... for a CPU)");
  configure->add_option("--runtime-include", configure_runtime_include,
                        "the runtime headers the build compiles kernels against (default: those measurement uses)");

  std::string kernel_name;
  CLI::App* lower = app.add_subcommand("lower", "Print a kernel's loop program under a schedule");
  add_def(lower);
  lower->add_option("--kernel", kernel_name, "the kernel")->required();
  std::string lower_schedule = "naive", lower_target = "host";
  uint64_t lower_seed = 0;
  lower->add_option("--schedule", lower_schedule, "naive | random | default (random: for a GPU target, a sampled program)")
      ->check(CLI::IsMember({"naive", "random", "default"}))
      ->capture_default_str();
  lower->add_option("--target", lower_target, "host, cuda:sm_XX or a CPU target string")->capture_default_str();
  lower->add_option("--seed", lower_seed, "seed of --schedule random");

  std::string features_kernel, features_schedule = "naive", features_target = "host";
  uint64_t features_seed = 0;
  FeatureOptions feature_opts;
  bool features_raw = false;
  CLI::App* features = app.add_subcommand("features", "Print the cost model's features of each store of a kernel under a schedule");
  add_def(features);
  features->add_option("--kernel", features_kernel, "the kernel")->required();
  features->add_option("--schedule", features_schedule, "naive | random | default (random: for a GPU target, a sampled program)")
      ->check(CLI::IsMember({"naive", "random", "default"}))
      ->capture_default_str();
  features->add_option("--target", features_target, "host, cuda:sm_XX or a CPU target string")->capture_default_str();
  features->add_option("--seed", features_seed, "seed of --schedule random");
  features->add_option("--cache-line", feature_opts.cache_line_bytes, "cache line bytes")->check(CLI::PositiveNumber)->capture_default_str();
  features->add_flag("--raw", features_raw, "print the values before log2(1 + x) scaling");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e, out, err);
      return 0;
    }
    app.exit(e, out, err);
    return kExitMisuse;
  }

  try {
    Program program = load_program_file(def_path);
    if (check->parsed()) {
      fmt::print(out, "{}: {} kernel{} OK\n", def_path, program.kernels.size(), program.kernels.size() == 1 ? "" : "s");
    } else if (list->parsed()) {
      list_kernels(program, json, out);
    } else if (emit->parsed()) {
      check_lib_name(emit_opts.lib_name);
      emit_opts.schedule = kScheduleNames.at(schedule_name);
      emit_opts.session.flags = split_flags(flags_text);
      EmitReport report = emit_library(program, emit_opts, out);
      for (auto& n : report.notes) fmt::print(out, "{}\n", n);
    } else if (tune->parsed()) {
      tune_session.flags = split_flags(flags_text);
      if (!fault_plan.empty()) tune_opts.faults = parse_fault_plan(fault_plan);
      for (const std::string& name : tune_kernels)
        if (!program.find(name)) throw UsageError(fmt::format("no kernel named '{}' in {}", name, def_path));
      if (total_trials && !tune_kernels.empty()) throw UsageError("--total-trials is for a run without --kernel");
      TuningSessions sessions(tune_session);
      if (tune_kernels.empty()) {
        scheduled.tune = tune_opts;
        scheduled.scheduler.strategy = strategy_name == "gradient" ? SchedulingStrategy::Gradient : SchedulingStrategy::RoundRobin;
        scheduled.scheduler.objective = parse_scheduler_objective(objective_name);
        if (total_trials) {
          scheduled.total_trials = *total_trials;
        } else {
          for (const Kernel& k : program.kernels) scheduled.total_trials += trials_given ? tune_opts.trials : static_cast<int>(k.attrs.trials.value_or(64));
        }
        print_scheduled_summary(tune_scheduled(program, sessions, scheduled, out), out);
        return 0;
      }
      for (const Kernel& k : program.kernels) {
        if (!tune_kernels.empty() && std::find(tune_kernels.begin(), tune_kernels.end(), k.name) == tune_kernels.end()) continue;
        TuneOptions opts = tune_opts;
        if (!trials_given) opts.trials = static_cast<int>(k.attrs.trials.value_or(64));
        TuningSession& session = sessions.for_kernel(k);
        if (!session.cannot_measure().empty()) throw std::runtime_error(session.cannot_measure());
        fmt::print(out, "[tune] {}: {} trials on {} with {}\n", k.name, opts.trials, session.target().to_string(), session.compiler().identity());
        session.tune(k, opts, out);
      }
    } else if (sketch->parsed()) {
      const Kernel* k = program.find(sketch_kernel);
      if (!k) throw UsageError(fmt::format("no kernel named '{}' in {}", sketch_kernel, def_path));
      Target target = sketch_target == "host" ? Target{} : parse_target(sketch_target);
      SamplerContext ctx = sampler_context_for(target);
      std::vector<Sketch> sketches = generate_sketches(std::make_shared<const ComputeDAG>(k->dag), ctx, SketchRules::for_context(ctx));
      fmt::print(out, "{}: {} sketch{} for {}\n", k->name, sketches.size(), sketches.size() == 1 ? "" : "es", ctx.gpu ? "GPU" : "CPU");
      for (size_t i = 0; i < sketches.size(); ++i) {
        fmt::print(out, "\n== sketch {}: {}\n", i, fmt::join(sketches[i].derivation, ", "));
        out << describe_steps(sketches[i].state) << state_to_string(sketches[i].state);
      }
    } else if (configure->parsed()) {
      check_lib_name(lib_name);
      configure_library(program, lib_name, out_dir, configure_targets, configure_compiler, split_flags(configure_flags), configure_runtime_include);
    } else if (lower->parsed()) {
      const Kernel* k = program.find(kernel_name);
      if (!k) throw UsageError(fmt::format("no kernel named '{}' in {}", kernel_name, def_path));
      auto dag = std::make_shared<const ComputeDAG>(k->dag);
      State state = schedule_for_printing(dag, lower_schedule, lower_seed, lower_target);
      out << describe_steps(state) << to_string(lower_state(state, k->name));
    } else if (features->parsed()) {
      const Kernel* k = program.find(features_kernel);
      if (!k) throw UsageError(fmt::format("no kernel named '{}' in {}", features_kernel, def_path));
      auto dag = std::make_shared<const ComputeDAG>(k->dag);
      State state = schedule_for_printing(dag, features_schedule, features_seed, features_target);
      feature_opts.log_scale = !features_raw;
      out << describe_steps(state);
      std::vector<StoreFeatures> rows = extract_features(state, feature_opts);
      for (size_t r = 0; r < rows.size(); ++r) {
        fmt::print(out, "store {}: {}\n", r, rows[r].buffer);
        for (int i = 0; i < kNumFeatures; ++i) fmt::print(out, "  {:<44} {}\n", feature_name(i), rows[r].values[i]);
      }
    }
  } catch (const CompileError& e) {
    err << e.render() << "\n";
    return kExitBadInput;
  } catch (const UsageError& e) {
    err << "ansor-gen: " << e.what() << "\n";
    return kExitMisuse;
  } catch (const std::exception& e) {
    err << "ansor-gen: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  return 0;
}

}  // namespace ansor
