// softmax, layer_norm, batch_norm. Reductions keep the reduced dimensions with extent 1, so
// every intermediate has the input's rank.
#include <fmt/format.h>

#include "lang/builtins/common.h"

namespace ansor {

namespace {

// idx with the dimensions in [first, rank) replaced by 0: the position in a kept-dims reduction.
std::vector<Expr> reduced_index(const std::vector<IterVar>& axes, int first, int last) {
  std::vector<Expr> idx = axis_exprs(axes);
  for (int d = first; d < last; ++d) idx[d] = int_imm(0);
  return idx;
}

// A reduction over dimensions [first, last) of x, keeping them with extent 1; `value` maps an
// element of x at the full index to what is reduced.
TensorRef reduce_dims(const BuiltinCall& call, const char* suffix, ReduceOp op, const TensorRef& x, int first, int last,
                      const std::function<Expr(const std::vector<Expr>&)>& value) {
  std::vector<int64_t> shape = x.shape;
  std::vector<IterVar> reduce_axes;
  for (int d = first; d < last; ++d) {
    reduce_axes.push_back({make_var("k" + std::to_string(d - first)), x.shape[d]});
    shape[d] = 1;
  }
  auto axes = make_axes(shape);
  std::vector<Expr> idx = axis_exprs(axes);
  for (int d = first; d < last; ++d) idx[d] = reduce_axes[d - first].var;
  return call.define(suffix, std::move(axes), reduce(op, reduce_axes, value(idx)));
}

TensorRef softmax(const BuiltinCall& call) {
  call.allow_keywords({"axis"});
  call.expect_tensors(1);
  expect_float(call, 0);
  const TensorRef& x = call.tensor(0);
  int axis = call.axis_arg("axis", -1, x.rank());
  auto element = [&](const std::vector<Expr>& idx) { return load_tensor(x, idx); };
  TensorRef max = reduce_dims(call, "max", ReduceOp::Max, x, axis, axis + 1, element);
  auto exp_axes = make_axes(x.shape);
  Expr shifted = sub(load_tensor(x, axis_exprs(exp_axes)), load_tensor(max, reduced_index(exp_axes, axis, axis + 1)));
  TensorRef e = call.define("exp", exp_axes, ansor::call(MathFn::Exp, {shifted}));
  TensorRef sum = reduce_dims(call, "sum", ReduceOp::Sum, e, axis, axis + 1, [&](const std::vector<Expr>& idx) { return load_tensor(e, idx); });
  auto axes = make_axes(x.shape);
  Expr body = div(load_tensor(e, axis_exprs(axes)), load_tensor(sum, reduced_index(axes, axis, axis + 1)));
  return call.define("softmax", std::move(axes), body);
}

void expect_param_shape(const BuiltinCall& call, int i, const std::vector<int64_t>& shape) {
  if (call.tensor(i).shape != shape)
    call.fail_at(call.arg_loc(i), fmt::format("shape mismatch in '{}': '{}' must have shape {}, but its shape is {}", call.function(),
                                              call.tensor(i).name, shape_string(shape), shape_string(call.tensor(i).shape)));
}

// Normalises over dimensions axis .. rank-1; gamma and beta have those dimensions' shape.
TensorRef layer_norm(const BuiltinCall& call) {
  call.allow_keywords({"axis", "eps"});
  call.expect_tensors(3);
  DType t = common_numeric_dtype(call);
  expect_float(call, 0);
  const TensorRef &x = call.tensor(0), &gamma = call.tensor(1), &beta = call.tensor(2);
  int axis = call.axis_arg("axis", -1, x.rank());
  double eps = call.float_arg("eps", 1e-5);
  std::vector<int64_t> param_shape(x.shape.begin() + axis, x.shape.end());
  expect_param_shape(call, 1, param_shape);
  expect_param_shape(call, 2, param_shape);
  int rank = x.rank();
  int64_t count = 1;
  for (int64_t e : param_shape) count *= e;
  Expr inv_count = make_const(t, 1.0 / static_cast<double>(count));
  TensorRef sum = reduce_dims(call, "sum", ReduceOp::Sum, x, axis, rank, [&](const std::vector<Expr>& idx) { return load_tensor(x, idx); });
  auto centered = [&](const std::vector<Expr>& idx, const std::vector<Expr>& reduced) {
    return sub(load_tensor(x, idx), mul(load_tensor(sum, reduced), inv_count));
  };
  TensorRef sq = reduce_dims(call, "sqsum", ReduceOp::Sum, x, axis, rank, [&](const std::vector<Expr>& idx) {
    std::vector<Expr> reduced = idx;
    for (int d = axis; d < rank; ++d) reduced[d] = int_imm(0);
    Expr c = centered(idx, reduced);
    return mul(c, c);
  });
  auto axes = make_axes(x.shape);
  std::vector<Expr> idx = axis_exprs(axes), reduced = reduced_index(axes, axis, rank);
  std::vector<Expr> param_idx(idx.begin() + axis, idx.end());
  Expr inv_std = ansor::call(MathFn::Rsqrt, {add(mul(load_tensor(sq, reduced), inv_count), make_const(t, eps))});
  Expr body = add(mul(mul(centered(idx, reduced), inv_std), load_tensor(gamma, param_idx)), load_tensor(beta, param_idx));
  return call.define("layer_norm", std::move(axes), body);
}

TensorRef batch_norm(const BuiltinCall& call) {
  call.allow_keywords({"axis", "eps"});
  call.expect_tensors(5);
  DType t = common_numeric_dtype(call);
  expect_float(call, 0);
  const TensorRef& x = call.tensor(0);
  int axis = call.axis_arg("axis", 1, x.rank());
  double eps = call.float_arg("eps", 1e-5);
  for (int i = 1; i < 5; ++i) expect_param_shape(call, i, {x.shape[axis]});
  auto axes = make_axes(x.shape);
  std::vector<Expr> c = {axes[axis].var};
  Expr inv_std = ansor::call(MathFn::Rsqrt, {add(load_tensor(call.tensor(2), c), make_const(t, eps))});
  Expr body = add(mul(mul(sub(load_tensor(x, axis_exprs(axes)), load_tensor(call.tensor(1), c)), inv_std),
                      load_tensor(call.tensor(3), c)),
                  load_tensor(call.tensor(4), c));
  return call.define("batch_norm", std::move(axes), body);
}

}  // namespace

void register_normalization(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("softmax", softmax);
  table.emplace_back("layer_norm", layer_norm);
  table.emplace_back("batch_norm", batch_norm);
}

}  // namespace ansor
