// ansor-gen features: the cost model's features of each store of a kernel under a schedule.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

#include "features/features.h"
#include "schedule/state_printer.h"

namespace ansor::cli {

namespace {

struct FeaturesCommand {
  PrintedSchedule schedule;
  FeatureOptions options;
  bool raw = false;
};

}  // namespace

Subcommand add_features(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "features", "Print the cost model's features of each store of a kernel under a schedule");
  auto c = std::make_shared<FeaturesCommand>();
  add_printed_schedule_options(*cmd, c->schedule);
  cmd->add_option("--cache-line", c->options.cache_line_bytes, "cache line bytes")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--raw", c->raw, "print the values before log2(1 + x) scaling");
  return with_program(cmd, input, [c, &input](const Program& program, std::ostream& out) {
            const Kernel& k = find_kernel(program, c->schedule.kernel, input.def_path);
            State state = schedule_for_printing(std::make_shared<const ComputeDAG>(k.dag), c->schedule);
            c->options.log_scale = !c->raw;
            out << describe_steps(state);
            std::vector<StoreFeatures> rows = extract_features(state, c->options);
            for (size_t r = 0; r < rows.size(); ++r) {
              fmt::print(out, "store {}: {}\n", r, rows[r].buffer);
              for (int i = 0; i < kNumFeatures; ++i) fmt::print(out, "  {:<44} {}\n", feature_name(i), rows[r].values[i]);
            }
          });
}

}  // namespace ansor::cli
