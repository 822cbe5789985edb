// Matching tensorized loop nests against tensor intrinsics.
#include "lower/tensorize.h"

#include "ir/arith.h"

namespace ansor {

namespace {

struct Nest {
  std::vector<const VarNode*> vars;
  std::vector<int64_t> extents;
  const StoreNode* store = nullptr;
};

// The perfect nest of loops from `loop` down to one store.
std::optional<Nest> perfect_nest(const ForNode& loop) {
  Nest nest;
  const ForNode* f = &loop;
  for (;;) {
    if (f->masked() || f->for_kind == ForKind::Parallel || f->for_kind == ForKind::ThreadBinding) return std::nullopt;
    nest.vars.push_back(f->var.get());
    nest.extents.push_back(f->extent);
    if (auto* inner = f->body->as<ForNode>()) {
      f = inner;
      continue;
    }
    nest.store = f->body->as<StoreNode>();
    if (!nest.store) return std::nullopt;
    return nest;
  }
}

bool uses_any(const Expr& e, const std::vector<const VarNode*>& vars) {
  for (const VarNode* v : vars)
    if (uses_var(e, v)) return true;
  return false;
}

// A factor of the product: a load converted to the accumulator's type, under selects that
// give zero where a condition independent of the nest fails (a padding), those conditions
// collected.
struct Factor {
  const LoadNode* load = nullptr;
  std::vector<Expr> conditions;
};

std::optional<Factor> factor_of(Expr e, DType acc, const Nest& nest) {
  Factor f;
  bool converted = false;
  for (;;) {
    if (auto* c = e->as<CastNode>()) {
      if (e->dtype != acc) return std::nullopt;
      converted = true;
      e = c->value;
    } else if (auto* s = e->as<SelectNode>()) {
      if (!is_const_zero(simplify(s->false_value)) || uses_any(s->cond, nest.vars)) return std::nullopt;
      f.conditions.push_back(s->cond);
      e = s->true_value;
    } else if (auto* l = e->as<LoadNode>()) {
      if (!converted && e->dtype != acc) return std::nullopt;
      f.load = l;
      return f;
    } else {
      return std::nullopt;
    }
  }
}

// Whether the flat offset of `indices` into `b` steps by `strides` along the nest's variables.
bool has_strides(const Buffer& b, const std::vector<Expr>& indices, const Nest& nest, const std::vector<int64_t>& strides) {
  const Expr flat = simplify(flat_index(b, indices));
  for (size_t a = 0; a < nest.vars.size(); ++a) {
    std::optional<int64_t> c = linear_coefficient(flat, nest.vars[a]);
    if (!c || *c != strides[a]) return false;
  }
  return true;
}

TensorCall::Operand first_element(const std::string& buffer, const std::vector<Expr>& indices, const Nest& nest) {
  VarMap zero;
  for (const VarNode* v : nest.vars) zero.push_back({v, int_imm(0)});
  std::vector<Expr> at;
  for (const Expr& i : indices) at.push_back(simplify(substitute(i, zero)));
  return {buffer, at};
}

}  // namespace

std::optional<TensorCall> match_tensor_call(const LoweredKernel& kernel, const ForNode& loop, const std::vector<const TensorIntrinsic*>& rows) {
  std::optional<Nest> nest = rows.empty() ? std::nullopt : perfect_nest(loop);
  if (!nest) return std::nullopt;
  const StoreNode& st = *nest->store;
  const Buffer* out = kernel.find_buffer(st.buffer);
  auto* sum = st.value->as<BinaryNode>();
  if (!out || !sum || sum->op != BinaryOp::Add) return std::nullopt;
  // out[o] = out[o] + product, in either order.
  auto is_self = [&](const Expr& e) {
    auto* l = e->as<LoadNode>();
    if (!l || l->tensor != st.buffer || l->indices.size() != st.indices.size()) return false;
    for (size_t d = 0; d < st.indices.size(); ++d)
      if (!structural_equal(l->indices[d], st.indices[d])) return false;
    return true;
  };
  const Expr product = is_self(sum->a) ? sum->b : is_self(sum->b) ? sum->a : nullptr;
  auto* mul = product ? product->as<BinaryNode>() : nullptr;
  if (!mul || mul->op != BinaryOp::Mul) return std::nullopt;
  std::optional<Factor> p = factor_of(mul->a, out->dtype, *nest), q = factor_of(mul->b, out->dtype, *nest);
  if (!p || !q) return std::nullopt;
  for (const TensorIntrinsic* row : rows) {
    if (row->extents != nest->extents || row->out.dtype != out->dtype || !has_strides(*out, st.indices, *nest, row->out.strides)) continue;
    for (const auto& [l, r] : {std::pair{&*p, &*q}, std::pair{&*q, &*p}}) {
      const Buffer* lb = kernel.find_buffer(l->load->tensor);
      const Buffer* rb = kernel.find_buffer(r->load->tensor);
      if (!lb || !rb || lb->dtype != row->lhs.dtype || rb->dtype != row->rhs.dtype) continue;
      if (!has_strides(*lb, l->load->indices, *nest, row->lhs.strides) || !has_strides(*rb, r->load->indices, *nest, row->rhs.strides))
        continue;
      TensorCall call;
      call.intrinsic = row;
      call.lhs = first_element(lb->name, l->load->indices, *nest);
      call.rhs = first_element(rb->name, r->load->indices, *nest);
      call.out = first_element(out->name, st.indices, *nest);
      for (const Factor* f : {l, r})
        for (const Expr& c : f->conditions) call.guard = call.guard ? logical_and(call.guard, c) : c;
      return call;
    }
  }
  return std::nullopt;
}

}  // namespace ansor
