// The CUDA backend: CUDA kernels (codegen/cuda_generator.h) compiled by nvcc for one GPU
// architecture (`cuda:sm_XX`; `cuda`: the device present), measured on a device of that
// architecture against the naive program run on the CPU. Its libraries take device pointers,
// with variants on a cudaStream_t, and are built by the project's CUDA compiler
// (cmake/AnsorKernelsCuda.cmake).
#pragma once

#include "backend/backend.h"

namespace ansor {

class CudaBackend final : public Backend {
 public:
  Target::Kind kind() const override { return Target::Kind::Cuda; }
  std::string name() const override { return "Cuda"; }
  std::string device_description() const override { return "a CUDA GPU"; }
  bool names(const std::string& target) const override;
  const CodeGenerator& code_generator() const override;
  IntrinsicTable intrinsics() const override;
  std::vector<std::string> kernel_flags(const KernelBuildRequest& request) const override;
  KernelCompiler kernel_compiler(const KernelBuildRequest& request) const override;
  Target resolve_target(const KernelBuildRequest& request, const std::function<const KernelCompiler&()>& compiler) const override;
  std::string cannot_measure(const KernelBuildRequest& request, const Target& target, const KernelCompiler& compiler) const override;
  // nvcc takes seconds per candidate: every core of the host compiles.
  int build_parallelism(const Target& target) const override;
  std::unique_ptr<Measurer> make_measurer(KernelCompiler compiler, const Target& target, MeasureOptions options) const override;
  // The GPU's limits, and the launch check of the lowered program (lower/gpu_launch.h) that
  // every candidate of the sampler passes.
  SamplerContext sampler_context(const Target& target) const override;
  std::string header_includes() const override { return "#include <cuda_runtime_api.h>\n"; }
  std::string header_interface_comment() const override;
  std::string entry_point_companions(const std::vector<ParamDecl>& params, const std::string& symbol) const override;
  std::vector<std::string> variant_features(const KernelBuildRequest& request) const override;
  std::string cmake_variant(const KernelBuildRequest& request, const std::string& vlib, const std::string& runtime_include) const override;
  std::string cmake_library(const KernelBuildRequest& request, const std::string& runtime_include, bool dispatched) const override;
};

}  // namespace ansor
