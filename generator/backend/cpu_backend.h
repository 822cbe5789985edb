// The CPU backend: C++ kernels (codegen/cpp_generator.h) compiled by clang++ (or the named
// compiler) for the host (-march=native), a named CPU level or the CPU a target string names,
// measured on this CPU; a library for several CPU levels dispatches by the CPU's features.
#pragma once

#include "backend/backend.h"

namespace ansor {

class CpuBackend final : public Backend {
 public:
  Target::Kind kind() const override { return Target::Kind::Cpu; }
  std::string name() const override { return "Cpu"; }
  std::string device_description() const override { return "a CPU"; }
  bool names(const std::string& target) const override;
  const CodeGenerator& code_generator() const override;
  IntrinsicTable intrinsics() const override;
  std::vector<std::string> kernel_flags(const KernelBuildRequest& request) const override;
  KernelCompiler kernel_compiler(const KernelBuildRequest& request) const override;
  Target resolve_target(const KernelBuildRequest& request, const std::function<const KernelCompiler&()>& compiler) const override;
  std::string cannot_measure(const KernelBuildRequest& request, const Target& target, const KernelCompiler& compiler) const override;
  int build_parallelism(const Target& target) const override { return target.cores; }
  std::unique_ptr<Measurer> make_measurer(KernelCompiler compiler, const Target& target, MeasureOptions options) const override;
  SamplerContext sampler_context(const Target& target) const override;
  std::string header_includes() const override { return ""; }
  std::string header_interface_comment() const override;
  std::string entry_point_companions(const std::vector<ParamDecl>&, const std::string&) const override { return ""; }
  std::vector<std::string> variant_features(const KernelBuildRequest& request) const override;
  std::string cmake_variant(const KernelBuildRequest& request, const std::string& vlib, const std::string& runtime_include) const override;
  std::string cmake_library(const KernelBuildRequest& request, const std::string& runtime_include, bool dispatched) const override;
};

}  // namespace ansor
