// The C interface of a generated kernel (docs/language.md, "The emitted C interface"): one
// pointer per input in declaration order, then one per output, typed by dtype.
#pragma once

#include <string>
#include <vector>

#include "dag/compute_dag.h"

namespace ansor {

struct ParamDecl {
  std::string tensor;  // the name in kernels.def
  std::string name;    // the C parameter name
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool is_output = false;
  bool is_const = false;
};

std::vector<ParamDecl> kernel_params(const ComputeDAG& dag);

// `int symbol(const float* A, float* C)`; with restrict, the pointers are __restrict-qualified
// (the definition) and parameter names are kept either way. `extra` is a last parameter of
// another kind ("cudaStream_t stream"), if any.
std::string c_prototype(const std::vector<ParamDecl>& params, const std::string& symbol, bool with_restrict, const std::string& extra = "");

// "ANSOR_DTYPE_F32"
std::string dtype_enum_name(DType t);

}  // namespace ansor
