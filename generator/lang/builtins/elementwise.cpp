// Elementwise built-ins in tensor form: bias_add, the math functions applied to every element
// (relu, exp, gelu, ...), max / min / pow / select with broadcasting, and dtype conversions.
#include <fmt/format.h>

#include "lang/builtins/common.h"

namespace ansor {

namespace {

void expect_operands(const BuiltinCall& call, size_t count) {
  call.allow_keywords({});
  if (call.operands().size() != count)
    call.fail(fmt::format("'{}' takes {} argument{}, given {}", call.function(), count, count == 1 ? "" : "s", call.operands().size()));
}

TensorRef bias_add(const BuiltinCall& call) {
  call.allow_keywords({"axis"});
  call.expect_tensors(2);
  common_numeric_dtype(call);
  const TensorRef &x = call.tensor(0), &b = call.tensor(1);
  int axis = call.axis_arg("axis", 1, x.rank());
  if (b.rank() != 1 || b.shape[0] != x.shape[axis])
    call.fail_at(call.arg_loc(1), fmt::format("shape mismatch in 'bias_add': the bias must have shape [{}] (dimension {} of '{}'), "
                                              "but its shape is {}",
                                              x.shape[axis], axis, x.name, shape_string(b.shape)));
  auto axes = make_axes(x.shape);
  Expr body = add(load_tensor(x, axis_exprs(axes)), load_tensor(b, {axes[axis].var}));
  return call.define("bias_add", std::move(axes), body);
}

BuiltinFn math_builtin(MathFn fn) {
  return [fn](const BuiltinCall& call) {
    expect_operands(call, static_cast<size_t>(math_fn_arity(fn)));
    return elementwise(call, std::string(math_fn_name(fn)), call.operands(),
                       [&](const std::vector<TypedValue>& v) { return apply_math(fn, v, call.loc()); });
  };
}

BuiltinFn minmax_builtin(bool is_max) {
  return [is_max](const BuiltinCall& call) {
    expect_operands(call, 2);
    return elementwise(call, is_max ? "max" : "min", call.operands(),
                       [&](const std::vector<TypedValue>& v) { return apply_minmax(is_max, v[0], v[1], call.loc()); });
  };
}

TensorRef select_builtin(const BuiltinCall& call) {
  expect_operands(call, 3);
  return elementwise(call, "select", call.operands(),
                     [&](const std::vector<TypedValue>& v) { return apply_select(v[0], v[1], v[2], call.loc()); });
}

BuiltinFn cast_builtin(DType t) {
  return [t](const BuiltinCall& call) {
    expect_operands(call, 1);
    return elementwise(call, std::string(dtype_name(t)), call.operands(),
                       [&](const std::vector<TypedValue>& v) { return apply_cast(t, v[0], call.loc()); });
  };
}

}  // namespace

void register_elementwise(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("bias_add", bias_add);
#define MATH_FUNCTION(Enum, name, arity, accepts_int) table.emplace_back(name, math_builtin(MathFn::Enum));
#include "ir/math_function.def"
  table.emplace_back("max", minmax_builtin(true));
  table.emplace_back("min", minmax_builtin(false));
  table.emplace_back("select", select_builtin);
#define DTYPE(Enum, spelling, c_type, compute_type, bytes, is_float, is_signed) \
  table.emplace_back(spelling, cast_builtin(DType::Enum));
#include "ir/dtype.def"
}

}  // namespace ansor
