// GraphBuilder: the operations of a kernel under construction.
#include "lang/graph_builder.h"

#include <cassert>

#include "ir/arith.h"

namespace ansor {

const TensorRef* GraphBuilder::lookup(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

TensorRef GraphBuilder::add_placeholder(const std::string& name, DType dtype, std::vector<int64_t> shape, bool is_const) {
  TensorRef ref{name, dtype, shape};
  ops_.push_back(make_placeholder(name, dtype, std::move(shape), is_const));
  tensors_[name] = ref;
  return ref;
}

TensorRef GraphBuilder::add_compute(const std::string& name, std::vector<IterVar> axes, Expr body) {
  assert(!lookup(name));
  // f16 and bf16 are storage formats: reductions over them accumulate in f32, in an operation
  // of their own, and round once.
  if (auto* r = body->as<ReduceNode>(); r && dtype_needs_conversion(r->dtype)) {
    TensorRef acc = add_compute(unique_name(name + ".acc"), axes, reduce(r->op, r->axes, cast(DType::F32, r->source), r->condition));
    std::vector<IterVar> fresh;
    for (auto& ax : axes) fresh.push_back({make_var(ax.var->name), ax.extent});
    return add_compute(name, fresh, cast(r->dtype, load_tensor(acc, axis_exprs(fresh))));
  }
  // Index arithmetic written by users and built-ins is brought to canonical form once, here
  // (an axis of extent 1 becomes the constant 0).
  RangeMap ranges;
  for (auto& ax : axes) ranges[ax.var.get()] = Interval::range(ax.extent);
  if (auto* r = body->as<ReduceNode>())
    for (auto& ax : r->axes) ranges[ax.var.get()] = Interval::range(ax.extent);
  OpPtr op = make_compute(name, std::move(axes), simplify(body, ranges, SimplifyRules::Canonical));
  TensorRef ref{name, op->dtype, op->shape};
  ops_.push_back(op);
  tensors_[name] = ref;
  return ref;
}

std::string GraphBuilder::unique_name(const std::string& base) const {
  if (!lookup(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "." + std::to_string(i);
    if (!lookup(candidate)) return candidate;
  }
}

TensorRef GraphBuilder::rename_last(const std::string& new_name) {
  const Operation& last = *ops_.back();
  tensors_.erase(last.name);
  OpPtr renamed = make_compute(new_name, last.axes, last.body);
  ops_.back() = renamed;
  TensorRef ref{new_name, renamed->dtype, renamed->shape};
  tensors_[new_name] = ref;
  return ref;
}

const std::string& GraphBuilder::last_name() const { return ops_.back()->name; }

bool GraphBuilder::has_compute() const {
  for (auto& op : ops_)
    if (!op->is_placeholder()) return true;
  return false;
}

bool within_size_limit(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e > kMaxElements || n > kMaxElements / e) return false;
    n *= e;
  }
  return true;
}

std::vector<IterVar> make_axes(const std::vector<int64_t>& shape, const std::string& prefix) {
  std::vector<IterVar> axes;
  for (size_t d = 0; d < shape.size(); ++d) axes.push_back({make_var(prefix + std::to_string(d)), shape[d]});
  return axes;
}

Expr load_tensor(const TensorRef& t, std::vector<Expr> indices) { return load(t.name, t.dtype, std::move(indices)); }

}  // namespace ansor
