// Kernel descriptors.
#include "codegen/kernel_descriptor.h"

#include <fmt/format.h>

namespace ansor {

std::string kernel_descriptor(const std::vector<ParamDecl>& params, const ComputeDAG& dag, const std::string& kernel_name,
                              const std::string& symbol, const std::string& origin, const std::string& device) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) out += fmt::format("const int64_t ansor_shape_{}[] = {{{}}};\n", i, fmt::join(params[i].shape, ", "));
  out += "const ansor_tensor_info ansor_args[] = {\n";
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamDecl& p = params[i];
    out += fmt::format("    {{\"{}\", {}, {}, ansor_shape_{}, {}, {}}},\n", p.tensor, dtype_enum_name(p.dtype), p.shape.size(), i,
                       p.is_output ? 1 : 0, p.is_const ? 1 : 0);
  }
  out += "};\n";
  std::vector<std::string> casts;
  for (size_t i = 0; i < params.size(); ++i)
    casts.push_back(fmt::format("static_cast<{}{}*>(args[{}])", params[i].is_output ? "" : "const ", dtype_c_type(params[i].dtype), i));
  out += fmt::format("int ansor_call(void* const* args) {{ return {}({}); }}\n", symbol, fmt::join(casts, ", "));
  out += fmt::format("int ansor_call_packed(void* const* args) {{ return {}_packed({}); }}\n", symbol, fmt::join(casts, ", "));
  std::string pack_cases, element_cases;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].is_const) continue;
    std::string type(dtype_c_type(params[i].dtype));
    pack_cases += fmt::format("    case {}: return {}_pack_{}(static_cast<const {}*>(plain), static_cast<{}*>(packed));\n", i, symbol,
                              params[i].tensor, type, type);
    element_cases += fmt::format("    case {}: return {}_{}_packed_elements();\n", i, symbol, params[i].tensor);
  }
  if (pack_cases.empty()) {
    out += "int ansor_pack(int, const void*, void*) { return 1; }\nint64_t ansor_packed_elements(int) { return 0; }\n";
  } else {
    out += fmt::format("int ansor_pack(int arg, const void* plain, void* packed) {{\n  switch (arg) {{\n{}    default: return 1;\n  }}\n}}\n",
                       pack_cases);
    out += fmt::format("int64_t ansor_packed_elements(int arg) {{\n  switch (arg) {{\n{}    default: return 0;\n  }}\n}}\n", element_cases);
  }
  out += fmt::format(
      "\nextern \"C\" {{\nextern const ansor_kernel_info {0}_info;\n"
      "const ansor_kernel_info {0}_info = {{ANSOR_KERNEL_INFO_VERSION, \"{1}\", \"{2}\", \"{3}\", {4:.17g}, {5}, ansor_args, ansor_call,\n"
      "                                     ansor_call_packed,"
      " ansor_pack, ansor_packed_elements, {6}}};\n}}\n",
      symbol, kernel_name, dag.workload_key(), origin, dag.flop_count(), params.size(), device);
  return out;
}

}  // namespace ansor
