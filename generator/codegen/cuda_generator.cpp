// The CUDA generator: functions, descriptors and nvcc's command lines.
#include "codegen/cuda_generator.h"

#include <fmt/format.h>

#include <filesystem>

#include "codegen/cuda_codegen.h"
#include "codegen/kernel_descriptor.h"
#include "lower/gpu_launch.h"

namespace ansor {

std::string CudaGenerator::source_prelude() const { return "#include <ansor/cuda_support.h>\n\n#include <cstdint>\n"; }

std::string CudaGenerator::kernel_definitions(const LoweredKernel& lowered, const ComputeDAG& dag, const std::string& kernel_name,
                                              const std::string& symbol, const std::string& origin) const {
  std::vector<ParamDecl> params = kernel_params(dag);
  return fmt::format("namespace {0}_definitions {{\n\n{1}\n{2}\n}}  // namespace {0}_definitions\n", symbol,
                     emit_cuda_kernel(lowered, params, symbol), kernel_descriptor(params, dag, kernel_name, symbol, origin, "ANSOR_DEVICE_CUDA"));
}

std::vector<std::string> CudaGenerator::compile_command(const std::string& compiler, const std::vector<std::string>& flags,
                                                        const std::string& runtime_include, const std::string& source,
                                                        const std::string& output, CompileOutput kind, const std::string&) const {
  std::vector<std::string> cmd = {compiler};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  for (const std::string& f : language_flags()) cmd.push_back(f);
  // Candidates are generated code measured once: their warnings help nobody.
  if (kind != CompileOutput::Object) cmd.push_back("-w");
  // A candidate links the shared CUDA runtime: the measurement worker times it with that same
  // runtime (through the library's handle), found beside nvcc wherever the loader is not told.
  if (kind == CompileOutput::SharedLibrary) {
    cmd.insert(cmd.end(), {"-shared", "-cudart=shared"});
    const std::filesystem::path toolkit_lib = std::filesystem::path(compiler).parent_path().parent_path() / "lib64";
    std::error_code ec;
    if (std::filesystem::is_directory(toolkit_lib, ec)) cmd.push_back("-Xlinker=-rpath=" + toolkit_lib.string());
  }
  cmd.push_back("-I" + runtime_include);
  if (kind != CompileOutput::SharedLibrary) cmd.push_back("-c");
  cmd.insert(cmd.end(), {"-o", output, source});
  return cmd;
}

void CudaGenerator::check(const LoweredKernel& kernel, const Target& target) const { check_gpu_limits(kernel, target.gpu); }

}  // namespace ansor
