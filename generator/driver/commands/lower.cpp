// ansor-gen lower: a kernel's loop program under a schedule.
#include "driver/commands/subcommand.h"

#include <ostream>

#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "schedule/state_printer.h"

namespace ansor::cli {

Subcommand add_lower(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "lower", "Print a kernel's loop program under a schedule");
  auto c = std::make_shared<PrintedSchedule>();
  add_printed_schedule_options(*cmd, *c);
  return with_program(cmd, input, [c, &input](const Program& program, std::ostream& out) {
            const Kernel& k = find_kernel(program, c->kernel, input.def_path);
            State state = schedule_for_printing(std::make_shared<const ComputeDAG>(k.dag), *c);
            // Lowered for the target, as it is printed: with the layouts chosen for it.
            LowerOptions options;
            options.target = printing_target(c->target);
            out << describe_steps(state) << to_string(lower_state(state, k.name, options));
          });
}

}  // namespace ansor::cli
