// The ansor-gen subcommands, one file each, and the options several of them share. Each
// add_<name> registers its subcommand and options on the app (in the order of the help text)
// and returns what runs it once the command line names it.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/tuning_session.h"
#include "lang/program.h"
#include "schedule/state.h"

namespace ansor::cli {

// Misuse that the argument parser cannot see (an invalid library name, ...).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What every subcommand reads: the kernels.def file, loaded before the subcommand runs.
struct Input {
  std::string def_path;
};

// A registered subcommand and its action.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<void(std::ostream& out)> run;
};

// A subcommand of add_def_subcommand whose action runs on the kernels.def file, loaded (and
// checked: CompileError) once the command line is parsed.
Subcommand with_program(CLI::App* cmd, const Input& input, std::function<void(const Program& program, std::ostream& out)> action);

Subcommand add_check(CLI::App& app, Input& input);
Subcommand add_list(CLI::App& app, Input& input);
Subcommand add_emit(CLI::App& app, Input& input);
Subcommand add_tune(CLI::App& app, Input& input);
Subcommand add_sketch(CLI::App& app, Input& input);
Subcommand add_configure(CLI::App& app, Input& input);
Subcommand add_lower(CLI::App& app, Input& input);
Subcommand add_features(CLI::App& app, Input& input);
// `cache merge|distill|stats|key`: one subcommand with one of its own.
Subcommand add_cache(CLI::App& app, Input& input);

// A subcommand of `app` that reads the kernels.def file (its DEF argument).
CLI::App* add_def_subcommand(CLI::App& app, Input& input, const std::string& name, const std::string& description);

// The session options of emit and tune: --cache, --target, --compiler and --flags (the flags as
// text, see split_flags).
void add_session_options(CLI::App& cmd, SessionOptions& session, std::string& flags_text);

// --flags text, space separated.
std::vector<std::string> split_flags(const std::string& text);

// A library name must be a C identifier (UsageError).
void check_lib_name(const std::string& name);

// The named kernel (UsageError when the program has none of that name).
const Kernel& find_kernel(const Program& program, const std::string& name, const std::string& def_path);

// The options of a schedule to print (lower, features) and the schedule: the naive program, or
// the default or a random one for the target.
struct PrintedSchedule {
  std::string kernel, schedule = "naive", target = "host";
  uint64_t seed = 0;
};
void add_printed_schedule_options(CLI::App& cmd, PrintedSchedule& options);
// The target whose programs a printing command shows: the host as a build for it detects it (its
// vector ISA and tensor features), a CPU name (x86-64-v3) or a target string.
Target printing_target(const std::string& text);
State schedule_for_printing(const std::shared_ptr<const ComputeDAG>& dag, const PrintedSchedule& options);

}  // namespace ansor::cli
