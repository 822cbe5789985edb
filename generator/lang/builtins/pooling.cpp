// max_pool2d and avg_pool2d over NCHW. Max pooling pads with -inf (the lowest value for
// integers); average pooling divides by the number of in-bounds elements of each window.
#include <fmt/format.h>

#include "lang/builtins/common.h"

namespace ansor {

namespace {

struct PoolShape {
  std::vector<int64_t> size, stride, pad_before, pad_after;
  int64_t out_h = 0, out_w = 0;
};

PoolShape read_pool(const BuiltinCall& call) {
  call.allow_keywords({"size", "stride", "pad"});
  call.expect_tensors(1);
  call.expect_rank(0, 4, "[N, C, H, W]");
  if (!call.has_keyword("size")) call.fail(fmt::format("'{}' needs the window size (size = ...)", call.function()));
  PoolShape p;
  p.size = call.per_dim_arg("size", 2, 1);
  p.stride = call.per_dim_arg("stride", 2, 1);
  std::vector<int64_t> pads = call.per_dim_arg("pad", 2, 0, true);
  expect_at_least(call, "size", p.size, 1);
  expect_at_least(call, "stride", p.stride, 1);
  expect_at_least(call, "pad", pads, 0);
  p.pad_before.assign(pads.begin(), pads.begin() + 2);
  p.pad_after.assign(pads.begin() + 2, pads.end());
  for (int d = 0; d < 2; ++d)
    if (p.pad_before[d] >= p.size[d] || p.pad_after[d] >= p.size[d])
      call.fail(fmt::format("'pad' of '{}' must be smaller than the window, given {} with size {}", call.function(),
                            std::max(p.pad_before[d], p.pad_after[d]), p.size[d]));
  const TensorRef& x = call.tensor(0);
  p.out_h = window_output_extent(call, x.shape[2], p.pad_before[0] + p.pad_after[0], p.size[0], p.stride[0], 1);
  p.out_w = window_output_extent(call, x.shape[3], p.pad_before[1] + p.pad_after[1], p.size[1], p.stride[1], 1);
  return p;
}

// The window's element (r, s) of output point (y, x) in the padded input.
std::vector<Expr> window_index(const std::vector<IterVar>& axes, const PoolShape& p, const IterVar& r, const IterVar& s) {
  return {axes[0].var, axes[1].var, add(mul(axes[2].var, int_imm(p.stride[0])), r.var),
          add(mul(axes[3].var, int_imm(p.stride[1])), s.var)};
}

TensorRef max_pool2d(const BuiltinCall& call) {
  PoolShape p = read_pool(call);
  const TensorRef& x = call.tensor(0);
  if (x.dtype == DType::Bool) call.fail("'max_pool2d' needs numbers, not bool");
  TensorRef padded = pad_dims(call, x, 2, p.pad_before, p.pad_after, reduce_identity(ReduceOp::Max, x.dtype));
  auto axes = make_axes({x.shape[0], x.shape[1], p.out_h, p.out_w});
  IterVar r{make_var("ry"), p.size[0]}, s{make_var("rx"), p.size[1]};
  Expr body = reduce(ReduceOp::Max, {r, s}, load_tensor(padded, window_index(axes, p, r, s)));
  return call.define("max_pool2d", std::move(axes), body);
}

TensorRef avg_pool2d(const BuiltinCall& call) {
  PoolShape p = read_pool(call);
  expect_float(call, 0);
  const TensorRef& x = call.tensor(0);
  TensorRef padded = pad_dims(call, x, 2, p.pad_before, p.pad_after, make_const(x.dtype, 0));
  auto sum_axes = make_axes({x.shape[0], x.shape[1], p.out_h, p.out_w});
  IterVar r{make_var("ry"), p.size[0]}, s{make_var("rx"), p.size[1]};
  TensorRef sum = call.define("sum", sum_axes, reduce(ReduceOp::Sum, {r, s}, load_tensor(padded, window_index(sum_axes, p, r, s))));
  auto axes = make_axes(sum.shape);
  // In-bounds count per dimension: min(start + size, extent) - max(start, 0).
  Expr count = int_imm(1);
  for (int d = 0; d < 2; ++d) {
    Expr start = sub(mul(axes[2 + d].var, int_imm(p.stride[d])), int_imm(p.pad_before[d]));
    Expr end = min_of(add(start, int_imm(p.size[d])), int_imm(x.shape[2 + d]));
    count = mul(count, sub(end, max_of(start, int_imm(0))));
  }
  Expr body = div(load_tensor(sum, axis_exprs(axes)), cast(x.dtype, count));
  return call.define("avg_pool2d", std::move(axes), body);
}

}  // namespace

void register_pooling(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("max_pool2d", max_pool2d);
  table.emplace_back("avg_pool2d", avg_pool2d);
}

}  // namespace ansor
