// BuiltinCall argument checking, the registry of built-ins and broadcasting.
#include "lang/builtins/builtin.h"

#include <fmt/format.h>

#include <algorithm>

namespace ansor {

std::string shape_string(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

BuiltinCall::BuiltinCall(GraphBuilder& builder, std::string function, SourceLoc loc, std::string result_name,
                         std::vector<Operand> operands, std::vector<KeywordArg> keywords)
    : builder_(builder),
      function_(std::move(function)),
      loc_(std::move(loc)),
      result_name_(std::move(result_name)),
      operands_(std::move(operands)),
      keywords_(std::move(keywords)) {}

void BuiltinCall::fail(const std::string& message) const { throw CompileError(loc_, message); }
void BuiltinCall::fail_at(const SourceLoc& loc, const std::string& message) const { throw CompileError(loc, message); }

void BuiltinCall::expect_tensors(int count) const {
  if (static_cast<int>(operands_.size()) != count)
    fail(fmt::format("'{}' takes {} tensor argument{}, given {}", function_, count, count == 1 ? "" : "s", operands_.size()));
  for (auto& op : operands_)
    if (!op.is_tensor) fail_at(op.loc, fmt::format("argument of '{}' must be a tensor", function_));
}

void BuiltinCall::expect_rank(int i, int rank, const char* layout) const {
  const TensorRef& t = tensor(i);
  if (t.rank() != rank)
    fail_at(arg_loc(i), fmt::format("shape mismatch in '{}': '{}' must have rank {} ({}), but its shape is {}", function_,
                                    t.name, rank, layout, shape_string(t.shape)));
}

const KeywordArg* BuiltinCall::keyword(const std::string& name) const {
  for (auto& k : keywords_)
    if (k.name == name) return &k;
  return nullptr;
}

bool BuiltinCall::has_keyword(const std::string& name) const { return keyword(name) != nullptr; }

void BuiltinCall::allow_keywords(std::initializer_list<const char*> allowed) const {
  for (size_t i = 0; i < keywords_.size(); ++i) {
    const KeywordArg& k = keywords_[i];
    bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return k.name == a; });
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail_at(k.loc, fmt::format("unknown argument '{}' of '{}'{}", k.name, function_,
                                 list.empty() ? " (it takes none)" : " (expected " + list + ")"));
    }
    for (size_t j = 0; j < i; ++j)
      if (keywords_[j].name == k.name) fail_at(k.loc, fmt::format("argument '{}' given twice", k.name));
  }
}

int64_t BuiltinCall::int_arg(const std::string& name, int64_t fallback) const {
  const KeywordArg* k = keyword(name);
  if (!k) return fallback;
  if (k->is_list || k->values.size() != 1) fail_at(k->loc, fmt::format("argument '{}' must be a single integer", name));
  const NumberArg& v = k->values[0];
  if (v.is_float) fail_at(v.loc, fmt::format("argument '{}' must be an integer", name));
  check_magnitude(name, v);
  return v.int_value;
}

void BuiltinCall::check_magnitude(const std::string& name, const NumberArg& v) const {
  if (v.int_value > kMaxElements || v.int_value < -kMaxElements)
    fail_at(v.loc, fmt::format("argument '{}' of '{}' is out of range: {} (at most 2^40 in magnitude)", name, function_, v.int_value));
}

double BuiltinCall::float_arg(const std::string& name, double fallback) const {
  const KeywordArg* k = keyword(name);
  if (!k) return fallback;
  if (k->is_list || k->values.size() != 1) fail_at(k->loc, fmt::format("argument '{}' must be a single number", name));
  const NumberArg& v = k->values[0];
  return v.is_float ? v.float_value : static_cast<double>(v.int_value);
}

std::optional<std::vector<int64_t>> BuiltinCall::int_list_arg(const std::string& name) const {
  const KeywordArg* k = keyword(name);
  if (!k) return std::nullopt;
  std::vector<int64_t> out;
  for (auto& v : k->values) {
    if (v.is_float) fail_at(v.loc, fmt::format("argument '{}' must hold integers", name));
    check_magnitude(name, v);
    out.push_back(v.int_value);
  }
  return out;
}

std::vector<int64_t> BuiltinCall::per_dim_arg(const std::string& name, int n, int64_t fallback, bool allow_pairs) const {
  std::vector<int64_t> values(n, fallback);
  if (auto list = int_list_arg(name)) {
    const KeywordArg* k = keyword(name);
    if (list->size() == 1) {
      values.assign(n, (*list)[0]);
    } else if (static_cast<int>(list->size()) == n) {
      values = *list;
    } else if (allow_pairs && static_cast<int>(list->size()) == 2 * n) {
      return *list;
    } else {
      fail_at(k->loc, fmt::format("argument '{}' of '{}' needs 1 or {} values{}, given {}", name, function_, n,
                                  allow_pairs ? fmt::format(" (or {} as before..., after...)", 2 * n) : "", list->size()));
    }
  }
  if (!allow_pairs) return values;
  std::vector<int64_t> pairs = values;
  pairs.insert(pairs.end(), values.begin(), values.end());
  return pairs;
}

int BuiltinCall::axis_arg(const std::string& name, int64_t fallback, int rank) const {
  int64_t axis = int_arg(name, fallback);
  if (axis < -rank || axis >= rank) {
    const KeywordArg* k = keyword(name);
    fail_at(k ? k->loc : loc_, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void BuiltinCall::expect_within_size_limit(const std::vector<int64_t>& shape) const {
  if (!within_size_limit(shape))
    fail(fmt::format("'{}' would make a tensor of shape {}, more than 2^40 elements", function_, shape_string(shape)));
}

TensorRef BuiltinCall::define(const std::string& suffix, std::vector<IterVar> axes, Expr body) const {
  std::vector<int64_t> shape;
  for (auto& ax : axes) shape.push_back(ax.extent);
  expect_within_size_limit(shape);
  return builder_.add_compute(builder_.unique_name(result_name_ + "." + suffix), std::move(axes), std::move(body));
}

const BuiltinFn* find_builtin(const std::string& name) {
  static const std::vector<std::pair<std::string, BuiltinFn>> table = [] {
    std::vector<std::pair<std::string, BuiltinFn>> t;
    register_linear_algebra(t);
    register_convolution(t);
    register_pooling(t);
    register_normalization(t);
    register_elementwise(t);
    register_layout(t);
    return t;
  }();
  for (auto& [n, fn] : table)
    if (n == name) return &fn;
  return nullptr;
}

TensorRef elementwise(const BuiltinCall& call, const std::string& suffix, const std::vector<Operand>& operands,
                      const std::function<TypedValue(const std::vector<TypedValue>&)>& fn) {
  // numpy broadcasting: align shapes at the right; extents must match or be 1.
  std::vector<int64_t> shape;
  const Operand* first_tensor = nullptr;
  for (auto& op : operands) {
    if (!op.is_tensor) continue;
    if (!first_tensor) first_tensor = &op;
    const auto& s = op.tensor.shape;
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& out = shape[shape.size() - s.size() + i];
      if (out == 1) {
        out = s[i];
      } else if (s[i] != 1 && s[i] != out) {
        call.fail_at(op.loc, fmt::format("shape mismatch in '{}': {} of '{}' cannot be broadcast with {}", call.function(),
                                         shape_string(s), op.tensor.name, shape_string(shape)));
      }
    }
  }
  if (!first_tensor) call.fail(fmt::format("'{}' in tensor form needs a tensor operand", call.function()));
  std::vector<IterVar> axes = make_axes(shape);
  std::vector<TypedValue> values;
  for (auto& op : operands) {
    if (!op.is_tensor) {
      values.push_back(op.scalar);
      continue;
    }
    const auto& s = op.tensor.shape;
    std::vector<Expr> idx;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = shape.size() - s.size() + i;
      idx.push_back(s[i] == 1 && shape[d] != 1 ? int_imm(0) : Expr(axes[d].var));
    }
    values.push_back(strong(load_tensor(op.tensor, std::move(idx)), op.loc));
  }
  TypedValue result = finalize(fn(values));
  return call.define(suffix, std::move(axes), result.expr);
}

}  // namespace ansor
