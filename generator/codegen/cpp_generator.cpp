// The C++ generator: functions, descriptors, compile commands.
#include "codegen/cpp_generator.h"

#include <fmt/format.h>

#include "codegen/cpp_codegen.h"
#include "codegen/kernel_descriptor.h"
#include "codegen/kernel_signature.h"

namespace ansor {

void CodeGenerator::check(const LoweredKernel&, const Target&) const {}

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
  // An object is compiled as a build compiles sources (`-c SOURCE -o OUTPUT`).
  if (kind == CompileOutput::Object) {
    cmd.insert(cmd.end(), {"-c", source, "-o", output});
    return cmd;
  }
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
  return fmt::format("namespace {0}_definitions {{\n\n{1}\n{2}\n}}  // namespace {0}_definitions\n", symbol,
                     emit_cpp_kernel(lowered, params, symbol), kernel_descriptor(params, dag, kernel_name, symbol, origin, "ANSOR_DEVICE_CPU"));
}

}  // namespace ansor
