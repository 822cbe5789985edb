// ansor-gen sketch: the sketches of a kernel, as loop nests, with the rules that derived them.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <ostream>

#include "backend/backend_registry.h"
#include "sampler/sketch_generator.h"
#include "schedule/state_printer.h"

namespace ansor::cli {

namespace {

struct SketchCommand {
  std::string kernel, target = "host";
};

}  // namespace

Subcommand add_sketch(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "sketch", "Print the sketches of a kernel, as loop nests, with the rules that derived them");
  auto c = std::make_shared<SketchCommand>();
  cmd->add_option("--kernel", c->kernel, "the kernel")->required();
  cmd->add_option("--target", c->target, "host, a -march CPU name, cuda:sm_XX or a CPU target string")->capture_default_str();
  return with_program(cmd, input, [c, &input](const Program& program, std::ostream& out) {
            const Kernel& k = find_kernel(program, c->kernel, input.def_path);
            SamplerContext ctx = sampler_context_for(printing_target(c->target));
            std::vector<Sketch> sketches = generate_sketches(std::make_shared<const ComputeDAG>(k.dag), ctx, SketchRules::for_context(ctx));
            fmt::print(out, "{}: {} sketch{} for {}\n", k.name, sketches.size(), sketches.size() == 1 ? "" : "es", ctx.gpu ? "GPU" : "CPU");
            for (size_t i = 0; i < sketches.size(); ++i) {
              fmt::print(out, "\n== sketch {}: {}\n", i, fmt::join(sketches[i].derivation, ", "));
              out << describe_steps(sketches[i].state) << state_to_string(sketches[i].state);
            }
          });
}

}  // namespace ansor::cli
