// ansor-gen emit: writes the library's header and sources, with the best (or another) schedule
// of each kernel.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>

#include "driver/library_emitter.h"

namespace ansor::cli {

namespace {

struct EmitCommand {
  EmitOptions options;
  std::string schedule = "best";
  std::string flags_text;
};

const std::map<std::string, ScheduleKind> kScheduleNames = {
    {"best", ScheduleKind::Best}, {"default", ScheduleKind::Default}, {"naive", ScheduleKind::Naive}, {"random", ScheduleKind::Random},
    {"sampled", ScheduleKind::Sampled}};

}  // namespace

Subcommand add_emit(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "emit", "Write the library's header and sources");
  auto c = std::make_shared<EmitCommand>();
  EmitOptions& o = c->options;
  cmd->add_option("--name", o.lib_name, "library name: the prefix of every symbol")->required();
  cmd->add_option("--out", o.out_dir, "output directory")->required();
  add_session_options(*cmd, o.session, c->flags_text);
  cmd->add_option("--trials", o.trials, "with --schedule best: tune kernels without a record for this many trials");
  cmd->add_option("--schedule", c->schedule,
                  "best | default | naive | random (a random schedule; on GPUs sampled) | sampled (a program of the search space)")
      ->check(CLI::IsMember({"best", "default", "naive", "random", "sampled"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of --schedule random and sampled");
  cmd->add_option("--kernel", o.kernels, "emit only these kernels' sources (repeatable)");
  cmd->add_flag("--header-only", o.header_only, "write only the header and the registry");
  cmd->add_option("--tune-hint", o.tune_hint, "with --stamps-only: the command that tunes, named in the untuned-kernels line");
  cmd->add_flag("--stamps-only", o.stamps_only,
                "write only DIR/stamps/LIB_KERNEL.stamp, the records --schedule best would try, where they changed (the build's trigger to re-emit)");
  return with_program(cmd, input, [c](const Program& program, std::ostream& out) {
            check_lib_name(c->options.lib_name);
            c->options.schedule = kScheduleNames.at(c->schedule);
            c->options.session.flags = split_flags(c->flags_text);
            EmitReport report = emit_library(program, c->options, out);
            for (auto& n : report.notes) fmt::print(out, "{}\n", n);
          });
}

}  // namespace ansor::cli
