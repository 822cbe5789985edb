// The C++ generator: functions, descriptors, argument tables, compile commands; and the
// choice of generator per target.
#include "codegen/cpp_generator.h"

#include <fmt/format.h>

#include "codegen/cpp_codegen.h"
#include "codegen/kernel_signature.h"

namespace ansor {

const CodeGenerator& code_generator_for(Target::Kind kind) {
  static const CppGenerator cpp;
  if (kind == Target::Kind::Cpu) return cpp;
  throw std::invalid_argument("CUDA code generation is not implemented yet");
}

std::vector<std::string> CppGenerator::compile_command(const std::string& compiler, const std::vector<std::string>& flags,
                                                       const std::string& runtime_include, const std::string& source,
                                                       const std::string& output, CompileOutput kind,
                                                       const std::string& precompiled_prelude) const {
  std::vector<std::string> cmd = {compiler};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  for (const std::string& f : language_flags()) cmd.push_back(f);
  // Candidates are generated code measured once: their warnings help nobody.
  if (kind != CompileOutput::Object) cmd.push_back("-w");
  if (kind == CompileOutput::SharedLibrary) cmd.push_back("-shared");
  cmd.push_back("-I" + runtime_include);
  if (kind == CompileOutput::Object) cmd.push_back("-c");
  if (kind == CompileOutput::PrecompiledPrelude) cmd.insert(cmd.end(), {"-x", "c++-header"});
  if (kind == CompileOutput::SharedLibrary && !precompiled_prelude.empty()) cmd.insert(cmd.end(), {"-include-pch", precompiled_prelude});
  cmd.insert(cmd.end(), {"-o", output, source});
  return cmd;
}

std::string CppGenerator::source_prelude() const {
  return "#include <ansor/kernel_support.h>\n\n#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstring>\n#include <limits>\n";
}

std::string steps_comment(const State& state) {
  std::string steps = describe_steps(state), out;
  for (size_t begin = 0; begin < steps.size();) {
    size_t end = steps.find('\n', begin);
    out += "//   " + steps.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

std::string CppGenerator::kernel_definitions(const LoweredKernel& lowered, const ComputeDAG& dag, const std::string& kernel_name,
                                             const std::string& symbol, const std::string& origin) const {
  std::vector<ParamDecl> params = kernel_params(dag);
  // A namespace of its own keeps the helpers of several kernels in one file apart.
  std::string out = fmt::format("namespace {}_definitions {{\n\n", symbol);
  out += emit_cpp_kernel(lowered, params, symbol);
  out += "\n";
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
      " ansor_pack, ansor_packed_elements}};\n}}\n\n}}  // namespace {0}_definitions\n",
      symbol, kernel_name, dag.workload_key(), origin, dag.flop_count(), params.size());
  return out;
}

}  // namespace ansor
