// The options several ansor-gen subcommands share.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>

#include <sstream>

#include "backend/backend_registry.h"
#include "codegen/c_names.h"
#include "measure/host_target.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"

namespace ansor::cli {

CLI::App* add_def_subcommand(CLI::App& app, Input& input, const std::string& name, const std::string& description) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->add_option("DEF", input.def_path, "the kernels.def file")->required();
  return cmd;
}

Subcommand with_program(CLI::App* cmd, const Input& input, std::function<void(const Program& program, std::ostream& out)> action) {
  return {cmd, [&input, action = std::move(action)](std::ostream& out) { action(load_program_file(input.def_path), out); }};
}

void add_session_options(CLI::App& cmd, SessionOptions& session, std::string& flags_text) {
  cmd.add_option("--cache", session.cache_dir, "directory of tuning records");
  cmd.add_option("--target", session.target,
                 "host, a -march CPU name (x86-64-v3), cuda[:sm_XX] or a target string (cpu:ARCH:CPU:ISA:tTHREADS: built with "
                 "-march=CPU unless it is this machine's own)")
      ->capture_default_str();
  cmd.add_option("--compiler", session.compiler, "C++ compiler of the kernels (default clang++)");
  cmd.add_option("--flags", flags_text, "kernel compiler flags, space separated (default: -O3 -march=native ...)");
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

const Kernel& find_kernel(const Program& program, const std::string& name, const std::string& def_path) {
  const Kernel* k = program.find(name);
  if (!k) throw UsageError(fmt::format("no kernel named '{}' in {}", name, def_path));
  return *k;
}

void add_printed_schedule_options(CLI::App& cmd, PrintedSchedule& options) {
  cmd.add_option("--kernel", options.kernel, "the kernel")->required();
  cmd.add_option("--schedule", options.schedule, "naive | random | default (random: for a GPU target, a sampled program)")
      ->check(CLI::IsMember({"naive", "random", "default"}))
      ->capture_default_str();
  cmd.add_option("--target", options.target, "host, a -march CPU name, cuda:sm_XX or a CPU target string")->capture_default_str();
  cmd.add_option("--seed", options.seed, "seed of --schedule random");
}

Target printing_target(const std::string& text) { return resolve_target(text, make_kernel_compiler()); }

State schedule_for_printing(const std::shared_ptr<const ComputeDAG>& dag, const PrintedSchedule& options) {
  if (options.schedule == "naive") return State(dag);
  const SamplerContext ctx = sampler_context_for(printing_target(options.target));
  return options.schedule == "default" ? default_schedule(dag, ctx) : random_program(dag, ctx, options.seed);
}

}  // namespace ansor::cli
