// ansor-gen list: each kernel with its inputs, outputs, shapes, FLOPs and attributes, as text or
// JSON.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <ostream>

#include "codegen/kernel_signature.h"

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

}  // namespace

Subcommand add_list(CLI::App& app, Input& input) {
  CLI::App* cmd = add_def_subcommand(app, input, "list", "List each kernel with its inputs, outputs, shapes and FLOPs");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON");
  return {cmd, [json](const Program& program, std::ostream& out) { *json ? list_json(program, out) : list_text(program, out); }};
}

}  // namespace ansor::cli
