// Argument checks and padding shared by the built-ins.
#include "lang/builtins/common.h"

#include <fmt/format.h>

namespace ansor {

DType common_numeric_dtype(const BuiltinCall& call) {
  DType t = call.tensor(0).dtype;
  for (size_t i = 0; i < call.operands().size(); ++i) {
    const TensorRef& x = call.tensor(static_cast<int>(i));
    if (x.dtype == DType::Bool) call.fail_at(call.arg_loc(static_cast<int>(i)), fmt::format("'{}' needs numbers, but '{}' is bool", call.function(), x.name));
    if (x.dtype != t)
      call.fail_at(call.arg_loc(static_cast<int>(i)),
                   fmt::format("dtype mismatch in '{}': '{}' is {} but '{}' is {}", call.function(), call.tensor(0).name,
                               dtype_name(t), x.name, dtype_name(x.dtype)));
  }
  return t;
}

void expect_float(const BuiltinCall& call, int i) {
  if (!dtype_is_float(call.tensor(i).dtype))
    call.fail_at(call.arg_loc(i), fmt::format("'{}' needs a floating-point tensor, but '{}' is {}", call.function(),
                                              call.tensor(i).name, dtype_name(call.tensor(i).dtype)));
}

void expect_at_least(const BuiltinCall& call, const char* what, const std::vector<int64_t>& values, int64_t minimum) {
  for (int64_t v : values)
    if (v < minimum) call.fail(fmt::format("'{}' of '{}' must be at least {}, given {}", what, call.function(), minimum, v));
}

TensorRef pad_dims(const BuiltinCall& call, const TensorRef& x, int first_dim, const std::vector<int64_t>& before,
                   const std::vector<int64_t>& after, const Expr& value, const char* suffix) {
  bool any = false;
  for (size_t d = 0; d < before.size(); ++d) any = any || before[d] != 0 || after[d] != 0;
  if (!any) return x;
  std::vector<int64_t> shape = x.shape;
  for (size_t d = 0; d < before.size(); ++d) shape[first_dim + d] += before[d] + after[d];
  std::vector<IterVar> axes = make_axes(shape);
  std::vector<Expr> idx = axis_exprs(axes);
  Expr inside = bool_imm(true);
  for (size_t d = 0; d < before.size(); ++d) {
    size_t dim = first_dim + d;
    if (before[d] == 0 && after[d] == 0) continue;
    Expr v = axes[dim].var;
    if (before[d] > 0) inside = logical_and(inside, ge(v, int_imm(before[d])));
    if (after[d] > 0) inside = logical_and(inside, lt(v, int_imm(before[d] + x.shape[dim])));
    idx[dim] = sub(v, int_imm(before[d]));
  }
  return call.define(suffix, std::move(axes), select(inside, load_tensor(x, std::move(idx)), value));
}

int64_t window_output_extent(const BuiltinCall& call, int64_t in, int64_t pad_total, int64_t window, int64_t stride,
                             int64_t dilation) {
  // The dilated window's extent minus one; it can exceed int64 when it cannot fit anyway.
  int64_t reach = 0;
  if (__builtin_mul_overflow(dilation, window - 1, &reach) || in + pad_total <= reach)
    call.fail(fmt::format("shape mismatch in '{}': a window of {} with dilation {} does not fit an input of {} with padding {}",
                          call.function(), window, dilation, in, pad_total));
  return (in + pad_total - reach - 1) / stride + 1;
}

}  // namespace ansor
