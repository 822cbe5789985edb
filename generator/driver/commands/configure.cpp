// ansor-gen configure: what a build needs at configure time (header, registry, per-kernel
// fragments), with its targets checked so that a bad one fails then.
#include "driver/commands/subcommand.h"

#include "driver/library_emitter.h"

namespace ansor::cli {

namespace {

struct ConfigureCommand {
  std::string lib_name, out_dir;
  std::vector<std::string> targets = {"host"};
  std::string compiler, flags_text, runtime_include;
};

}  // namespace

Subcommand add_configure(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "configure", "What a build needs at configure time: header, registry, per-kernel fragments");
  auto c = std::make_shared<ConfigureCommand>();
  cmd->add_option("--name", c->lib_name, "library name")->required();
  cmd->add_option("--out", c->out_dir, "output directory")->required();
  cmd->add_option("--target", c->targets,
                  "the build's target, checked here so that a bad one fails at configure time; repeated: a library for several "
                  "CPU targets, dispatched at run time")
      ->capture_default_str();
  cmd->add_option("--compiler", c->compiler, "the kernel compiler the build uses (with several targets, asked which CPU features each uses)");
  cmd->add_option("--flags", c->flags_text, "the kernel flags (default: the target's, -O3 -march=native ... for a CPU)");
  cmd->add_option("--runtime-include", c->runtime_include,
                  "the runtime headers the build compiles kernels against (default: those measurement uses)");
  return with_program(cmd, input, [c](const Program& program, std::ostream&) {
            check_lib_name(c->lib_name);
            configure_library(program, c->lib_name, c->out_dir, c->targets, c->compiler, split_flags(c->flags_text), c->runtime_include);
          });
}

}  // namespace ansor::cli
