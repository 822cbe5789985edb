// Built-in tensor operators of kernels.def (`matmul(A, B)`, `conv2d_nchw(X, W, pad = 1)`, ...).
//
// Each built-in expands into index-form operations through GraphBuilder, exactly as if the user
// had written them: the search sees ordinary operations, with no per-operator templates. A
// built-in gets its arguments as a BuiltinCall, which also checks them and reports errors at
// the call.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "lang/graph_builder.h"
#include "lang/typed_value.h"

namespace ansor {

// A constant argument value (`stride = 2`, `eps = 1e-3`, an element of `pad = [1, 2]`).
struct NumberArg {
  bool is_float = false;
  int64_t int_value = 0;
  double float_value = 0;
  SourceLoc loc;
};

struct KeywordArg {
  std::string name;
  SourceLoc loc;
  bool is_list = false;
  std::vector<NumberArg> values;
};

// A positional argument in tensor form: a tensor or a scalar.
struct Operand {
  bool is_tensor = false;
  TensorRef tensor;
  TypedValue scalar;
  SourceLoc loc;
};

class BuiltinCall {
 public:
  BuiltinCall(GraphBuilder& builder, std::string function, SourceLoc loc, std::string result_name,
              std::vector<Operand> operands, std::vector<KeywordArg> keywords);

  const std::string& function() const { return function_; }
  const SourceLoc& loc() const { return loc_; }
  const std::vector<Operand>& operands() const { return operands_; }

  // Requires exactly `count` positional arguments, all tensors.
  void expect_tensors(int count) const;
  const TensorRef& tensor(int i) const { return operands_[i].tensor; }
  const SourceLoc& arg_loc(int i) const { return operands_[i].loc; }
  // Requires the tensor argument to have this rank.
  void expect_rank(int i, int rank, const char* layout) const;

  // Rejects keyword arguments not in `allowed`, and repeated ones.
  void allow_keywords(std::initializer_list<const char*> allowed) const;
  bool has_keyword(const std::string& name) const;
  int64_t int_arg(const std::string& name, int64_t fallback) const;
  double float_arg(const std::string& name, double fallback) const;
  // One value per dimension: an integer or a list of n integers; with allow_pairs also a list
  // of 2n (all "before" values, then all "after" values). Returns 2n values when allow_pairs.
  std::vector<int64_t> per_dim_arg(const std::string& name, int n, int64_t fallback, bool allow_pairs = false) const;
  std::optional<std::vector<int64_t>> int_list_arg(const std::string& name) const;
  // A possibly negative axis, checked and made non-negative.
  int axis_arg(const std::string& name, int64_t fallback, int rank) const;

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_at(const SourceLoc& loc, const std::string& message) const;

  // Fails unless a tensor of `shape` stays within the 2^40-element limit. define() checks every
  // tensor it makes; this lets a built-in check its result before the intermediates it needs.
  void expect_within_size_limit(const std::vector<int64_t>& shape) const;

  // Defines an intermediate operation named `<result>.<suffix>`.
  TensorRef define(const std::string& suffix, std::vector<IterVar> axes, Expr body) const;
  GraphBuilder& builder() const { return builder_; }

 private:
  const KeywordArg* keyword(const std::string& name) const;
  // Rejects an integer argument beyond kMaxElements in magnitude, so that shape arithmetic on
  // arguments cannot overflow.
  void check_magnitude(const std::string& name, const NumberArg& v) const;

  GraphBuilder& builder_;
  std::string function_;
  SourceLoc loc_;
  std::string result_name_;
  std::vector<Operand> operands_;
  std::vector<KeywordArg> keywords_;
};

using BuiltinFn = std::function<TensorRef(const BuiltinCall&)>;

// The built-in with this name, or null.
const BuiltinFn* find_builtin(const std::string& name);

// An elementwise operation over operands broadcast together (numpy rules): fn gets the operands'
// values at one point. Used by the arithmetic operators in tensor form and by built-ins.
TensorRef elementwise(const BuiltinCall& call, const std::string& suffix, const std::vector<Operand>& operands,
                      const std::function<TypedValue(const std::vector<TypedValue>&)>& fn);

// Registration, one function per file of built-ins.
void register_linear_algebra(std::vector<std::pair<std::string, BuiltinFn>>& table);
void register_convolution(std::vector<std::pair<std::string, BuiltinFn>>& table);
void register_pooling(std::vector<std::pair<std::string, BuiltinFn>>& table);
void register_normalization(std::vector<std::pair<std::string, BuiltinFn>>& table);
void register_elementwise(std::vector<std::pair<std::string, BuiltinFn>>& table);
void register_layout(std::vector<std::pair<std::string, BuiltinFn>>& table);

// "[2, 3]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace ansor
