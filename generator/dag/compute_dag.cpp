// ComputeDAG construction: dependency edges, FLOPs, canonical text and workload key.
#include "dag/compute_dag.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "ir/printer.h"

namespace ansor {

ComputeDAG::ComputeDAG(std::vector<OpPtr> ops) : ops_(std::move(ops)) {
  int n = num_ops();
  producers_.assign(n, {});
  consumers_.assign(n, {});
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) {
    for (const std::string& t : read_tensors(*ops_[i])) {
      auto it = index.find(t);
      if (it == index.end()) throw std::logic_error("ComputeDAG: " + ops_[i]->name + " reads " + t + " before it is defined");
      producers_[i].push_back(it->second);
      consumers_[it->second].push_back(i);
    }
    if (!index.emplace(ops_[i]->name, i).second) throw std::logic_error("ComputeDAG: duplicate operation " + ops_[i]->name);
  }
  for (int i = 0; i < n; ++i) {
    if (ops_[i]->is_placeholder()) {
      inputs_.push_back(i);
    } else if (consumers_[i].empty()) {
      outputs_.push_back(i);
    }
    flops_ += count_flops(*ops_[i]);
  }
  canonical_ = ansor::canonical_text(ops_, outputs_);
  key_ = hash_hex(canonical_);
}

int ComputeDAG::find(const std::string& name) const {
  for (int i = 0; i < num_ops(); ++i)
    if (ops_[i]->name == name) return i;
  return -1;
}

bool ComputeDAG::is_output(int i) const { return std::find(outputs_.begin(), outputs_.end(), i) != outputs_.end(); }

namespace {

// Arithmetic on values: float operations, and integer operations on tensor elements. Index
// arithmetic and the logic of conditions are free.
bool is_value(const Expr& e) {
  if (dtype_is_float(e->dtype)) return true;
  if (!dtype_is_int(e->dtype)) return false;
  return !collect_loads(e).empty();
}

double count_value_ops(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var:
    case ExprKind::Load: return 0;
    case ExprKind::Unary: {
      const Expr& a = e->as<UnaryNode>()->operand;
      return count_value_ops(a) + (is_value(e) ? 1 : 0);
    }
    case ExprKind::Binary: {
      auto* b = e->as<BinaryNode>();
      double own = is_value(b->a) || is_value(b->b) ? 1 : 0;
      return own + count_value_ops(b->a) + count_value_ops(b->b);
    }
    case ExprKind::Select: {
      auto* s = e->as<SelectNode>();
      return count_value_ops(s->cond) + std::max(count_value_ops(s->true_value), count_value_ops(s->false_value));
    }
    case ExprKind::Call: {
      double n = 1;
      for (auto& a : e->as<CallNode>()->args) n += count_value_ops(a);
      return n;
    }
    case ExprKind::Cast: return count_value_ops(e->as<CastNode>()->value);
    case ExprKind::Reduce: {
      auto* r = e->as<ReduceNode>();
      return 1 + count_value_ops(r->source);
    }
  }
  return 0;
}

}  // namespace

double count_flops(const Operation& op) {
  if (op.is_placeholder()) return 0;
  double points = 1;
  for (auto& ax : op.axes) points *= static_cast<double>(ax.extent);
  if (const ReduceNode* r = op.reduction())
    for (auto& ax : r->axes) points *= static_cast<double>(ax.extent);
  return points * count_value_ops(op.body);
}

std::string canonical_text(const std::vector<OpPtr>& ops, const std::vector<int>& outputs) {
  std::map<std::string, std::string> tensor_names;
  for (size_t i = 0; i < ops.size(); ++i) tensor_names[ops[i]->name] = "T" + std::to_string(i);
  std::string text;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = *ops[i];
    const std::string& name = tensor_names[op.name];
    if (op.is_placeholder()) {
      std::vector<std::string> dims;
      for (int64_t e : op.shape) dims.push_back(std::to_string(e));
      text += fmt::format("{} = {} {}[{}]\n", name, op.is_const ? "const" : "input", dtype_name(op.dtype),
                          fmt::join(dims, ", "));
      continue;
    }
    std::map<const VarNode*, std::string> var_names;
    std::vector<std::string> axes;
    for (size_t d = 0; d < op.axes.size(); ++d) {
      var_names[op.axes[d].var.get()] = "i" + std::to_string(d);
      axes.push_back(fmt::format("i{}:{}", d, op.axes[d].extent));
    }
    int reduce_count = 0;
    visit_pre_order(op.body, [&](const Expr& e) {
      if (auto* r = e->as<ReduceNode>())
        for (auto& ax : r->axes) var_names[ax.var.get()] = "r" + std::to_string(reduce_count++);
      return true;
    });
    PrintNames names;
    names.var = [&](const VarNode* v) {
      auto it = var_names.find(v);
      return it == var_names.end() ? std::string("?") : it->second;
    };
    names.tensor = [&](const std::string& t) { return tensor_names.at(t); };
    text += fmt::format("{}[{}] = {}({})\n", name, fmt::join(axes, ", "), dtype_name(op.dtype), to_string(op.body, names));
  }
  std::vector<std::string> outs;
  for (int o : outputs) outs.push_back("T" + std::to_string(o));
  text += fmt::format("outputs {}\n", fmt::join(outs, ", "));
  return text;
}

std::string hash_hex(const std::string& text) {
  XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

}  // namespace ansor
