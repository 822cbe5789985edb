// Access predicates over operations.
#include "dag/access_analysis.h"

#include <algorithm>

#include "ir/arith.h"

namespace ansor {

namespace {

bool has_branch(const Expr& e) {
  bool found = false;
  visit_pre_order(e, [&](const Expr& n) {
    if (n->kind == ExprKind::Select) found = true;
    return !found;
  });
  return found;
}

bool is_expensive(MathFn fn) {
  switch (fn) {
    case MathFn::Abs:
    case MathFn::Relu:
    case MathFn::Floor:
    case MathFn::Ceil:
    case MathFn::Tf32: return false;
    default: return true;
  }
}

bool has_expensive_op(const Expr& e) {
  bool found = false;
  visit_pre_order(e, [&](const Expr& n) {
    if (auto* c = n->as<CallNode>(); c && is_expensive(c->fn)) found = true;
    if (auto* b = n->as<BinaryNode>(); b && dtype_is_float(b->dtype) && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod))
      found = true;
    return !found;
  });
  return found;
}

// Each index is a constant or one variable plus a constant, and no variable appears twice.
bool is_injective_access(const LoadNode& l) {
  std::vector<const ExprNode*> seen;
  for (auto& idx : l.indices) {
    LinearForm f = linearize(idx);
    if (f.terms.empty()) continue;
    if (f.terms.size() != 1 || f.terms[0].coef != 1 || f.terms[0].atom->kind != ExprKind::Var) return false;
    const ExprNode* v = f.terms[0].atom.get();
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) return false;
    seen.push_back(v);
  }
  return true;
}

}  // namespace

int64_t spatial_size(const Operation& op) {
  int64_t n = 1;
  for (auto& ax : op.axes) n *= ax.extent;
  return n;
}

int64_t reduction_size(const Operation& op) {
  int64_t n = 1;
  if (const ReduceNode* r = op.reduction())
    for (auto& ax : r->axes) n *= ax.extent;
  return n;
}

bool is_strictly_inlinable(const Operation& op) {
  if (op.is_placeholder() || op.reduction()) return false;
  if (has_branch(op.body) || has_expensive_op(op.body)) return false;
  for (const LoadNode* l : collect_loads(op.body))
    if (!is_injective_access(*l)) return false;
  return true;
}

bool needs_multi_level_tiling(const Operation& op) {
  const ReduceNode* r = op.reduction();
  if (!r) return false;
  int missing = 0;
  for (const LoadNode* l : collect_loads(r->source)) {
    for (auto& ax : op.axes) {
      if (ax.extent == 1) continue;
      bool used = std::any_of(l->indices.begin(), l->indices.end(),
                              [&](const Expr& idx) { return uses_var(idx, ax.var.get()); });
      if (!used) ++missing;
    }
  }
  return missing >= 2;
}

bool elementwise_match(const Operation& producer, const Operation& consumer) {
  if (consumer.is_placeholder() || consumer.shape != producer.shape || consumer.reduction()) return false;
  bool reads = false;
  for (const LoadNode* l : collect_loads(consumer.body)) {
    if (l->tensor != producer.name) continue;
    reads = true;
    if (l->indices.size() != consumer.axes.size()) return false;
    for (size_t d = 0; d < l->indices.size(); ++d) {
      // An axis of extent 1 reads as the constant 0.
      bool same_axis = l->indices[d] == consumer.axes[d].var || (consumer.axes[d].extent == 1 && is_const_int(l->indices[d], 0));
      if (!same_axis) return false;
    }
  }
  return reads;
}

bool has_more_reduction_parallel(const Operation& op, int parallelism) {
  if (!op.reduction()) return false;
  int64_t space = spatial_size(op), reduce = reduction_size(op);
  return space < reduce && space <= static_cast<int64_t>(parallelism) * 16 && reduce >= 64;
}

}  // namespace ansor
