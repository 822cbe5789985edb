// The C++ code generator for CPU targets: kernels as `extern "C"` functions over the runtime
// (cpp_codegen.h), with their descriptors, compiled by a C++17 compiler.
#pragma once

#include "codegen/code_generator.h"

namespace ansor {

class CppGenerator final : public CodeGenerator {
 public:
  std::string source_extension() const override { return ".cpp"; }
  std::string source_prelude() const override;
  std::string kernel_definitions(const LoweredKernel& kernel, const ComputeDAG& dag, const std::string& kernel_name,
                                 const std::string& symbol, const std::string& origin) const override;
  // -Wno-psabi: kernels pass wide vectors (16 lanes on an AVX2 machine) only to inline helpers,
  // never across an ABI boundary, so the compilers' note that such calls would differ is noise.
  std::vector<std::string> language_flags() const override { return {"-std=c++17", "-fPIC", "-Wno-psabi"}; }
  std::vector<std::string> compile_command(const std::string& compiler, const std::vector<std::string>& flags,
                                           const std::string& runtime_include, const std::string& source, const std::string& output,
                                           CompileOutput kind, const std::string& precompiled_prelude = "") const override;
};

}  // namespace ansor
