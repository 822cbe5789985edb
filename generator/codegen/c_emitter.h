// What the C++ and CUDA code generators share: a kernel's program printed as lines of C++, the
// names of its buffers and loop variables, and scalar expressions over the helpers of
// runtime/include/ansor/scalar_support.h. Each generator derives its emitter from CEmitter and
// prints the statements its language has its own way (parallel loops and vectors on CPUs,
// thread indices and shared memory on GPUs).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/kernel_signature.h"
#include "ir/arith.h"
#include "lower/lowered_kernel.h"

namespace ansor {

class CEmitter {
 public:
  virtual ~CEmitter() = default;

 protected:
  // Loop variables and index arithmetic take the kernel's index type (32-bit as `int`).
  explicit CEmitter(const LoweredKernel& kernel) : kernel_(kernel), index_type_(kernel.index_dtype == DType::I32 ? "int" : "int64_t") {}

  // Parameters keep their C names (params[i] is buffer kernel.params[i]); other buffers get
  // unique names in this function's scope.
  void name_buffers(const std::vector<ParamDecl>& params);

  void line(const std::string& s);
  // `if (cond) { ... } else { ... }`, each branch's statements printed by `branch`.
  void emit_if(const IfThenElseNode& i, const std::function<void(const Stmt&)>& branch);
  const Buffer& buffer(const std::string& name) const;
  const std::string& buffer_name(const std::string& name) { return buffer_names_.at(name); }
  std::string var_name(const VarNode* v);

  // Where an element is stored, as printed (rotated rows included).
  Expr flat_expr(const Buffer& b, const std::vector<Expr>& idx) const { return simplify(element_offset(b, idx), ranges_); }
  std::string flat_index_text(const Buffer& b, const std::vector<Expr>& idx) { return index_expr(flat_expr(b, idx)); }
  // `name[index] = value;` with the conversion that f16 and bf16 buffers store.
  std::string store_text(const Buffer& b, const std::vector<Expr>& indices, const std::string& value);
  // The statement of a store: a copy between f16 (bf16) buffers moves the bits, with no round
  // trip through f32; anything else is store_text of the value.
  std::string store_statement(const StoreNode& s);

  // A tensorized loop nest: the call of its intrinsic that lowering found, on the addresses of
  // the operands' first elements, skipped where its guard (a padding's condition) fails.
  void emit_tensor_call(const TensorCall& call);

  // Index arithmetic: bounded, so plain C++ operators; floor division only where needed.
  std::string index_expr(const Expr& e);
  std::string expr(const Expr& e);

  // A math function on scalars of dtype t: the runtime's helpers (rsqrt, sigmoid, gelu, relu),
  // integer abs inline, the others as the language spells them.
  std::string math_call_text(MathFn fn, DType t, const std::vector<std::string>& args) const;
  // The language's spelling of a C math function (exp, abs, pow, ...) on floats of dtype t.
  virtual std::string float_math_text(MathFn fn, DType t, const std::string& args) const = 0;
  // min(x, y) or max(x, y) of scalars of C type `type`.
  virtual std::string min_max_text(bool is_min, const std::string& type, const std::string& x, const std::string& y) const = 0;
  // NaN ("nan") or infinity ("inf") of C type `type` ("float" or "double").
  virtual std::string special_float_text(const std::string& what, const std::string& type) const = 0;

  const LoweredKernel& kernel_;
  const std::string index_type_;
  std::string out_;
  int indent_ = 0;
  NameTable names_;
  std::map<std::string, std::string> buffer_names_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  RangeMap ranges_;

 private:
  bool provably_nonneg(const Expr& e) const { return bound_of(e, ranges_).min >= 0; }
  std::string int_literal(int64_t v, DType t) const;
  std::string float_literal(double v, DType t) const;
  std::string binary(const Expr& e);
};

// The C type in which values of dtype t are computed (f16 and bf16 in float).
std::string compute_type(DType t);

// How a const parameter is packed once (README, "The generated C interface"): the exported
// pack function `symbol_pack_tensor(input, input_packed)`, the elements of the packed copy, and
// the program that rearranges it (null where the packed copy is the input as it is).
struct PackedParam {
  std::string pack_symbol;
  std::vector<ParamDecl> pack_params;
  const LoweredKernel* packer = nullptr;
  int64_t elements = 1;
};
PackedParam packed_param(const LoweredKernel& kernel, const ParamDecl& param, const std::string& symbol);

}  // namespace ansor
