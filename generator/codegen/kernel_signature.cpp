// Kernel parameter lists and prototypes.
#include "codegen/kernel_signature.h"

#include <fmt/format.h>

#include <cctype>

#include "codegen/c_names.h"

namespace ansor {

std::vector<ParamDecl> kernel_params(const ComputeDAG& dag) {
  std::vector<ParamDecl> params;
  NameTable names;
  auto add = [&](int i, bool output) {
    const Operation& op = dag.op(i);
    params.push_back({op.name, names.unique(op.name), op.dtype, op.shape, output, op.is_const});
  };
  for (int i : dag.inputs()) add(i, false);
  for (int o : dag.outputs()) add(o, true);
  return params;
}

std::string c_prototype(const std::vector<ParamDecl>& params, const std::string& symbol, bool with_restrict, const std::string& extra) {
  std::string args;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamDecl& p = params[i];
    args += fmt::format("{}{}{}* {}{}", i ? ", " : "", p.is_output ? "" : "const ", dtype_c_type(p.dtype),
                        with_restrict ? "__restrict " : "", p.name);
  }
  if (!extra.empty()) args += (args.empty() ? "" : ", ") + extra;
  return fmt::format("int {}({})", symbol, args);
}

std::string dtype_enum_name(DType t) {
  std::string n(dtype_name(t));
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "ANSOR_DTYPE_" + n;
}

}  // namespace ansor
