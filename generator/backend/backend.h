// A backend: everything ansor does differently for one kind of target (Target::Kind), in one
// place, so that adding a kind of target is adding a backend and registering it
// (backend_registry.h). It owns the kind's code generator, the library-level text around the
// kernels (header additions, whether and how variants are dispatched), the kernel compiler and
// its flags, the device probe and the measurer, the sampler's view of the target, the CMake
// text a build needs, and the table of tensor intrinsics. The layers below expose parameters
// (a CodeGenerator for the builder, a SamplerContext for the sampler); a backend fills them in,
// and driver/ and the CMake module ask it instead of testing the kind.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lower/tensor_intrinsic.h"
#include "codegen/code_generator.h"
#include "codegen/kernel_signature.h"
#include "measure/compiler.h"
#include "measure/measurer.h"
#include "sampler/sampler_context.h"
#include "target/target.h"

namespace ansor {

// A target as the CLI and CMake name it ("host", "x86-64-v3", "cuda", "cuda:sm_80", a target
// string) with the user's kernel compiler and flags (empty: the backend's own).
struct KernelBuildRequest {
  std::string target = "host";
  std::string compiler;
  std::vector<std::string> flags;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Target::Kind kind() const = 0;
  // The name of its CMake functions (cmake/AnsorKernels<Name>.cmake): "Cpu", "Cuda".
  virtual std::string name() const = 0;
  // "a CPU", "a CUDA GPU": what a library of this backend runs on, for messages.
  virtual std::string device_description() const = 0;
  // Whether a target named as the CLI and CMake name it is of this backend's kind.
  virtual bool names(const std::string& target) const = 0;

  virtual const CodeGenerator& code_generator() const = 0;
  // The tensor intrinsics of its kind (lower/tensor_intrinsic.h), each offered to the targets
  // with its features.
  virtual IntrinsicTable intrinsics() const = 0;

  // The flags that compile the request's kernels: the user's, else the backend's defaults, made
  // to build for the named target. Throws std::invalid_argument for a target that no such flags
  // build for (a CPU target string whose ISA they do not give).
  virtual std::vector<std::string> kernel_flags(const KernelBuildRequest& request) const = 0;
  // The compiler that builds (and measures) the request's kernels, with kernel_flags().
  virtual KernelCompiler kernel_compiler(const KernelBuildRequest& request) const = 0;
  // The target the request names; `compiler` is asked only where the target depends on it
  // (what -march=native means here).
  virtual Target resolve_target(const KernelBuildRequest& request, const std::function<const KernelCompiler&()>& compiler) const = 0;
  // Why this machine cannot measure for `target` (no device of its architecture, a CPU without
  // the target's features); empty when it can.
  virtual std::string cannot_measure(const KernelBuildRequest& request, const Target& target, const KernelCompiler& compiler) const = 0;
  // How many compilers build candidates at once.
  virtual int build_parallelism(const Target& target) const = 0;
  // The measurer of candidates for `target`.
  virtual std::unique_ptr<Measurer> make_measurer(KernelCompiler compiler, const Target& target, MeasureOptions options) const = 0;
  virtual SamplerContext sampler_context(const Target& target) const = 0;

  // The library header's additions: includes after the runtime's, the comment that says how the
  // kernels are called, and the prototypes that go with each entry point (`symbol` and
  // `symbol_packed`) over its parameters.
  virtual std::string header_includes() const = 0;
  virtual std::string header_interface_comment() const = 0;
  virtual std::string entry_point_companions(const std::vector<ParamDecl>& params, const std::string& symbol) const = 0;

  // A library for several targets holds one variant per target and a dispatcher: the features
  // each variant's code uses, which the dispatcher tests at run time. Throws
  // std::invalid_argument for a target that cannot be a variant (or a backend without variants).
  virtual std::vector<std::string> variant_features(const KernelBuildRequest& request) const = 0;
  // CMake `set()` lines that `ansor-gen configure` writes for the build of one variant `vlib`
  // of a library (the library itself for one target): what its build steps name as the target
  // (ANSOR_KERNEL_STEP_TARGET_<vlib>), the flags that are the records' key
  // (ANSOR_KERNEL_FLAGS_<vlib>), and what the backend's CMake functions read (the command that
  // compiles a source, with <SOURCE> and <OUTPUT> to fill in), so that the CMake module holds
  // no copy of the flag logic. `runtime_include` is the directory of the runtime's headers.
  virtual std::string cmake_variant(const KernelBuildRequest& request, const std::string& vlib, const std::string& runtime_include) const = 0;
  // The library-wide lines: for a dispatched library (`dispatched`), the command that compiles
  // the dispatcher (ANSOR_KERNEL_DISPATCH_COMPILE).
  virtual std::string cmake_library(const KernelBuildRequest& request, const std::string& runtime_include, bool dispatched) const = 0;
};

}  // namespace ansor
