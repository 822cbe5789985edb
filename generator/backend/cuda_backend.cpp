// The CUDA backend: nvcc, the device probe, the stream entry points, the build's architecture.
#include "backend/cuda_backend.h"

#include <fmt/format.h>

#include <stdexcept>
#include <thread>

#include "backend/cmake_text.h"
#include "codegen/cpp_generator.h"
#include "codegen/cuda_generator.h"
#include "lower/gpu_launch.h"
#include "lower/lower.h"
#include "measure/cuda_device.h"

namespace ansor {

bool CudaBackend::names(const std::string& target) const {
  if (target == "cuda") return true;
  try {
    return parse_target(target).kind == Target::Kind::Cuda;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

SamplerContext CudaBackend::sampler_context(const Target& target) const {
  SamplerContext ctx = SamplerContext::for_gpu(target);
  ctx.launch_problem = [target](const State& state) -> std::string {
    LowerOptions options;
    options.target = target;
    try {
      check_gpu_limits(lower_state(state, "candidate", options), target.gpu);
      return "";
    } catch (const std::invalid_argument& e) {  // InvalidState: what lowering or the launch check refuses
      return e.what();
    }
  };
  // The tensor cores' warp rows, each a warp tile's count of instruction tiles.
  for (const TensorIntrinsic* row : tensor_intrinsics_for(target)) {
    TensorizeOption option{row->lhs.dtype, row->rhs.dtype, row->out.dtype};
    option.depth = row->extents[0];
    option.warp_m_tiles = row->warp_m_tiles;
    option.warp_n_tiles = row->warp_n_tiles;
    option.tf32 = row->tf32_operands;
    ctx.tensor_intrinsics.push_back(option);
  }
  return ctx;
}

const CodeGenerator& CudaBackend::code_generator() const {
  static const CudaGenerator generator;
  return generator;
}

IntrinsicTable CudaBackend::intrinsics() const { return cuda_tensor_intrinsics(); }

std::vector<std::string> CudaBackend::kernel_flags(const KernelBuildRequest& request) const {
  return request.flags.empty() ? cuda_kernel_flags(resolve_cuda_target(request.target)) : request.flags;
}

KernelCompiler CudaBackend::kernel_compiler(const KernelBuildRequest& request) const {
  const std::string nvcc = request.compiler.empty() ? find_nvcc() : request.compiler;
  if (nvcc.empty()) throw std::runtime_error("no CUDA compiler (nvcc) found for " + request.target + ": set ANSOR_NVCC or CUDACXX");
  return make_kernel_compiler(nvcc, kernel_flags(request));
}

// Emitting needs no compiler: the architecture names the target.
Target CudaBackend::resolve_target(const KernelBuildRequest& request, const std::function<const KernelCompiler&()>&) const {
  return resolve_cuda_target(request.target);
}

std::string CudaBackend::cannot_measure(const KernelBuildRequest&, const Target& target, const KernelCompiler& compiler) const {
  std::string why;
  std::optional<CudaDevice> device = probe_cuda_device(compiler.path, why);
  if (!device) return fmt::format("tuning for {} measures on a GPU of that architecture: {}", target.to_string(), why);
  if (device->target.cpu != target.cpu)
    return fmt::format("tuning for {} measures on a GPU of that architecture: the one here is {} ({})", target.to_string(), device->name,
                       device->target.cpu);
  return "";
}

int CudaBackend::build_parallelism(const Target&) const { return static_cast<int>(std::thread::hardware_concurrency()); }

std::unique_ptr<Measurer> CudaBackend::make_measurer(KernelCompiler compiler, const Target& target, MeasureOptions options) const {
  // Candidates are checked against the naive program compiled as C++ for the CPU.
  static const CppGenerator reference;
  options.reference_generator = &reference;
  return std::make_unique<Measurer>(std::move(compiler), target, code_generator(), std::move(options));
}

std::string CudaBackend::header_interface_comment() const {
  return "/* Kernels for a CUDA GPU. Each takes device pointers to its inputs in declaration order,\n"
         " * then its outputs: dense row-major tensors that must not overlap. The plain functions run\n"
         " * on the default stream and return once the GPU has finished; the _stream variants queue\n"
         " * the work on the stream and return at once. Returns 0 on success, else the cudaError_t\n"
         " * of the first CUDA call that failed. Calls are thread-safe. */\n\n";
}

std::string CudaBackend::entry_point_companions(const std::vector<ParamDecl>& params, const std::string& symbol) const {
  return c_prototype(params, symbol + "_stream", false, "cudaStream_t stream") + ";\n";
}

std::vector<std::string> CudaBackend::variant_features(const KernelBuildRequest& request) const {
  throw std::invalid_argument(fmt::format("a library for several targets takes host and CPU names (x86-64-v3, ...), not '{}'", request.target));
}

std::string CudaBackend::cmake_variant(const KernelBuildRequest& request, const std::string& vlib, const std::string&) const {
  // `cuda` is the device found at configure time: the build steps name its architecture.
  return cmake_set("ANSOR_KERNEL_STEP_TARGET_" + vlib, {resolve_cuda_target(request.target).to_string()}) +
         cmake_set("ANSOR_KERNEL_FLAGS_" + vlib, kernel_flags(request));
}

// The project's CUDA compiler builds the sources (cmake/AnsorKernelsCuda.cmake) for the
// target's architecture, optimised whatever the build type, with the user's flags.
std::string CudaBackend::cmake_library(const KernelBuildRequest& request, const std::string&, bool) const {
  std::vector<std::string> options = {"-O3"};
  options.insert(options.end(), request.flags.begin(), request.flags.end());
  return cmake_set("ANSOR_KERNEL_CUDA_ARCHITECTURE", {resolve_cuda_target(request.target).cpu.substr(3)}) +
         cmake_set("ANSOR_KERNEL_CUDA_OPTIONS", options);
}

}  // namespace ansor
