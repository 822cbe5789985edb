// The CUDA code generator for CUDA targets: kernels as `__global__` functions with host launchers
// behind the C interface (cuda_codegen.h), with their descriptors, compiled by nvcc.
#pragma once

#include "codegen/code_generator.h"

namespace ansor {

class CudaGenerator final : public CodeGenerator {
 public:
  std::string source_extension() const override { return ".cu"; }
  std::string source_prelude() const override;
  std::string kernel_definitions(const LoweredKernel& kernel, const ComputeDAG& dag, const std::string& kernel_name,
                                 const std::string& symbol, const std::string& origin) const override;
  std::vector<std::string> language_flags() const override { return {"-std=c++17", "-Xcompiler=-fPIC"}; }
  std::vector<std::string> compile_command(const std::string& compiler, const std::vector<std::string>& flags,
                                           const std::string& runtime_include, const std::string& source, const std::string& output,
                                           CompileOutput kind, const std::string& precompiled_prelude = "") const override;
  // The target's limits (lower/gpu_launch.h).
  void check(const LoweredKernel& kernel, const Target& target) const override;
};

}  // namespace ansor
