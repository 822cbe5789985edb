// matmul, batch_matmul, dense.
#include <fmt/format.h>

#include "lang/builtins/common.h"

namespace ansor {

namespace {

void expect_equal(const BuiltinCall& call, int64_t a, int64_t b, const char* what) {
  if (a != b)
    call.fail(fmt::format("shape mismatch in '{}': {} is {} in '{}' {} but {} in '{}' {}", call.function(), what, a,
                          call.tensor(0).name, shape_string(call.tensor(0).shape), b, call.tensor(1).name,
                          shape_string(call.tensor(1).shape)));
}

TensorRef matmul(const BuiltinCall& call) {
  call.allow_keywords({});
  call.expect_tensors(2);
  call.expect_rank(0, 2, "[M, K]");
  call.expect_rank(1, 2, "[K, N]");
  common_numeric_dtype(call);
  const TensorRef &a = call.tensor(0), &b = call.tensor(1);
  expect_equal(call, a.shape[1], b.shape[0], "K");
  auto axes = make_axes({a.shape[0], b.shape[1]});
  IterVar k{make_var("k"), a.shape[1]};
  Expr body = reduce(ReduceOp::Sum, {k}, mul(load_tensor(a, {axes[0].var, k.var}), load_tensor(b, {k.var, axes[1].var})));
  return call.define("matmul", std::move(axes), body);
}

TensorRef batch_matmul(const BuiltinCall& call) {
  call.allow_keywords({});
  call.expect_tensors(2);
  call.expect_rank(0, 3, "[batch, M, K]");
  call.expect_rank(1, 3, "[batch, K, N]");
  common_numeric_dtype(call);
  const TensorRef &a = call.tensor(0), &b = call.tensor(1);
  expect_equal(call, a.shape[0], b.shape[0], "the batch");
  expect_equal(call, a.shape[2], b.shape[1], "K");
  auto axes = make_axes({a.shape[0], a.shape[1], b.shape[2]});
  IterVar k{make_var("k"), a.shape[2]};
  Expr body = reduce(ReduceOp::Sum, {k},
                     mul(load_tensor(a, {axes[0].var, axes[1].var, k.var}), load_tensor(b, {axes[0].var, k.var, axes[2].var})));
  return call.define("batch_matmul", std::move(axes), body);
}

TensorRef dense(const BuiltinCall& call) {
  call.allow_keywords({});
  call.expect_tensors(2);
  call.expect_rank(0, 2, "[M, K]");
  call.expect_rank(1, 2, "[N, K]");
  common_numeric_dtype(call);
  const TensorRef &x = call.tensor(0), &w = call.tensor(1);
  expect_equal(call, x.shape[1], w.shape[1], "K");
  auto axes = make_axes({x.shape[0], w.shape[0]});
  IterVar k{make_var("k"), x.shape[1]};
  Expr body = reduce(ReduceOp::Sum, {k}, mul(load_tensor(x, {axes[0].var, k.var}), load_tensor(w, {axes[1].var, k.var})));
  return call.define("dense", std::move(axes), body);
}

}  // namespace

void register_linear_algebra(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("matmul", matmul);
  table.emplace_back("batch_matmul", batch_matmul);
  table.emplace_back("dense", dense);
}

}  // namespace ansor
