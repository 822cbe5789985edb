// ansor-gen list: each kernel with its inputs, outputs, shapes, FLOPs and attributes, as text or
// JSON; or how tuning shards split the kernels.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <numeric>
#include <optional>
#include <ostream>

#include "codegen/kernel_signature.h"
#include "driver/shard_plan.h"

namespace ansor::cli {

namespace {

std::string tensor_text(const ParamDecl& p) { return fmt::format("{} {}[{}]", p.tensor, dtype_name(p.dtype), fmt::join(p.shape, ", ")); }

void list_json(const Program& program, std::ostream& out) {
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
}

void list_text(const Program& program, std::ostream& out) {
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

// The split of `ansor-gen tune --shard I/N` (the same trials: each kernel's own, else 64, or
// --trials), shard by shard.
void list_shards(const Program& program, int count, std::optional<int> trials_each, std::ostream& out) {
  const ShardPlan plan = plan_shards(program, kernel_trials(program, trials_each), count);
  const double total = std::accumulate(plan.cost.begin(), plan.cost.end(), 0.0);
  fmt::print(out, "{} kernels in {} shards by expected cost (FLOPs x weight x trials); the largest shard is {:.3f}x the mean\n",
             program.kernels.size(), count, plan.imbalance());
  for (int s = 0; s < count; ++s) {
    std::vector<std::string> names;
    for (size_t i = 0; i < program.kernels.size(); ++i)
      if (plan.shard_of[i] == s) names.push_back(program.kernels[i].name);
    fmt::print(out, "shard {}/{}: {:5.1f}% of the cost, {} trials, {} kernel{}: {}\n", s, count,
               total > 0 ? 100 * plan.shard_cost[static_cast<size_t>(s)] / total : 0.0, plan.shard_trials[static_cast<size_t>(s)], names.size(), names.size() == 1 ? "" : "s",
               fmt::join(names, ", "));
  }
}

}  // namespace

Subcommand add_list(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "list", "List each kernel with its inputs, outputs, shapes and FLOPs");
  struct ListCommand {
    bool json = false;
    std::optional<int> shards, trials;
  };
  auto c = std::make_shared<ListCommand>();
  cmd->add_flag("--json", c->json, "print JSON");
  cmd->add_option("--shards", c->shards, "N: print how `ansor-gen tune --shard I/N` splits the kernels")->check(CLI::Range(1, 1000000));
  cmd->add_option("--trials", c->trials, "with --shards: trials per kernel (default: each kernel's trials attribute, else 64)")
      ->check(CLI::NonNegativeNumber);
  return with_program(cmd, input, [c](const Program& program, std::ostream& out) {
    if (c->shards) return list_shards(program, *c->shards, c->trials, out);
    c->json ? list_json(program, out) : list_text(program, out);
  });
}

}  // namespace ansor::cli
