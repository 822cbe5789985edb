// ansor-gen check: parses and validates kernels.def.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace ansor::cli {

Subcommand add_check(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "check", "Parse and validate kernels.def");
  return with_program(cmd, input, [&input](const Program& program, std::ostream& out) {
            fmt::print(out, "{}: {} kernel{} OK\n", input.def_path, program.kernels.size(), program.kernels.size() == 1 ? "" : "s");
          });
}

}  // namespace ansor::cli
