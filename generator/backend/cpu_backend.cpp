// The CPU backend: flags per CPU level, the host's features, the compile commands of a build.
#include "backend/cpu_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "backend/cmake_text.h"
#include "codegen/cpp_generator.h"
#include "measure/cpu_variant.h"
#include "measure/host_target.h"

namespace ansor {

namespace {

// The kernel compiler's command that compiles a source into an object of the library, with
// the placeholders the CMake module fills in.
std::vector<std::string> object_command(const CodeGenerator& generator, const std::string& compiler, const std::vector<std::string>& flags,
                                        const std::string& runtime_include) {
  return generator.compile_command(compiler, flags, runtime_include, "<SOURCE>", "<OUTPUT>", CompileOutput::Object);
}

// Whether the CLI's target is a full target string (cpu:ARCH:CPU:ISA:tN) rather than host or a
// CPU name; names() has parsed it.
bool is_target_string(const std::string& target) { return target.rfind("cpu:", 0) == 0; }

// The user's flags, else the defaults (-march=native): what a target's own flags start from.
std::vector<std::string> requested_flags(const KernelBuildRequest& request) {
  return request.flags.empty() ? default_kernel_flags() : request.flags;
}

}  // namespace

bool CpuBackend::names(const std::string& target) const {
  if (target == "host" || is_cpu_name(target)) return true;
  try {
    return parse_target(target).kind == Target::Kind::Cpu;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

const CodeGenerator& CpuBackend::code_generator() const {
  static const CppGenerator generator;
  return generator;
}

IntrinsicTable CpuBackend::intrinsics() const { return cpu_tensor_intrinsics(); }

SamplerContext CpuBackend::sampler_context(const Target& target) const {
  SamplerContext ctx = SamplerContext::for_cpu(target);
  // The dot-product rows (one output axis of lanes, one reduction axis of depth) and AMX's tile
  // rows (steps, rows, k / depth, lanes, depth).
  for (const TensorIntrinsic* row : tensor_intrinsics_for(target)) {
    if (row->extents.size() == 2 && row->reduces == std::vector<bool>{false, true})
      ctx.tensor_intrinsics.push_back({row->lhs.dtype, row->rhs.dtype, row->out.dtype, row->extents[0], row->extents[1]});
    if (row->extents.size() == 5 && row->reduces == std::vector<bool>{true, false, true, false, true})
      ctx.tensor_intrinsics.push_back({row->lhs.dtype, row->rhs.dtype, row->out.dtype, row->extents[3], row->extents[4], row->extents[1],
                                       row->tile_rows});
  }
  return ctx;
}

std::vector<std::string> CpuBackend::kernel_flags(const KernelBuildRequest& request) const {
  // A target string builds for what it names or is refused, so that its records say what their
  // code needs (measure/host_target.h); a named CPU level builds with its own -march, never the
  // host's (measure/cpu_variant.h).
  if (is_target_string(request.target))
    return flags_for_target_string(request.target, make_kernel_compiler(request.compiler, requested_flags(request)));
  return flags_for_cpu(requested_flags(request), request.target);
}

KernelCompiler CpuBackend::kernel_compiler(const KernelBuildRequest& request) const {
  return make_kernel_compiler(request.compiler, kernel_flags(request));
}

Target CpuBackend::resolve_target(const KernelBuildRequest& request, const std::function<const KernelCompiler&()>& compiler) const {
  return ansor::resolve_target(request.target, compiler());
}

std::string CpuBackend::cannot_measure(const KernelBuildRequest& request, const Target&, const KernelCompiler& compiler) const {
  // The host's flags build for this CPU; a CPU level's or a target string's may not.
  if (!is_cpu_name(request.target) && !is_target_string(request.target)) return "";
  KernelCompiler native = make_kernel_compiler(request.compiler, requested_flags(request));
  std::vector<std::string> missing = missing_features(cpu_features(compiler), cpu_features(native));
  if (missing.empty()) return "";
  return fmt::format("tuning for {} needs a CPU that runs its code: this one lacks {}", request.target, fmt::join(missing, ", "));
}

std::unique_ptr<Measurer> CpuBackend::make_measurer(KernelCompiler compiler, const Target& target, MeasureOptions options) const {
  return std::make_unique<Measurer>(std::move(compiler), target, code_generator(), std::move(options));
}

std::string CpuBackend::header_interface_comment() const {
  return "/* Each kernel takes its inputs in declaration order, then its outputs: dense row-major\n"
         " * tensors that must not overlap. Returns 0 on success, non-zero when workspace could not\n"
         " * be allocated. Calls are thread-safe. */\n\n";
}

std::vector<std::string> CpuBackend::variant_features(const KernelBuildRequest& request) const {
  if (request.target != "host" && !is_cpu_name(request.target))
    throw std::invalid_argument(
        fmt::format("a library for several targets takes host and CPU names (x86-64-v3, ...), not '{}'", request.target));
  return cpu_features(kernel_compiler(request));
}

std::string CpuBackend::cmake_variant(const KernelBuildRequest& request, const std::string& vlib, const std::string& runtime_include) const {
  const std::vector<std::string> flags = kernel_flags(request);
  return cmake_set("ANSOR_KERNEL_STEP_TARGET_" + vlib, {request.target}) + cmake_set("ANSOR_KERNEL_FLAGS_" + vlib, flags) +
         cmake_set("ANSOR_KERNEL_COMPILE_" + vlib, object_command(code_generator(), request.compiler, flags, runtime_include));
}

std::string CpuBackend::cmake_library(const KernelBuildRequest& request, const std::string& runtime_include, bool dispatched) const {
  std::string out = cmake_set("ANSOR_KERNEL_BUILD_COMPILER", {request.compiler});
  if (!dispatched) return out;
  // The dispatcher runs before it knows the CPU: on x86-64 it is built for the architecture's
  // baseline, elsewhere with the library's flags.
  std::vector<std::string> flags = requested_flags(request);
#if defined(__x86_64__)
  flags = flags_for_cpu(flags, "x86-64");
#endif
  return out + cmake_set("ANSOR_KERNEL_DISPATCH_COMPILE", object_command(code_generator(), request.compiler, flags, runtime_include));
}

}  // namespace ansor
