// What the benchmarks share beside the protocol (protocol.h): building kernels of a State and
// loading them, their arguments, tuning to a budget.
#pragma once

#include <ansor/runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lang/program.h"
#include "measure/aligned_buffer.h"
#include "protocol.h"
#include "measure/measurer.h"
#include "records/cache.h"
#include "schedule/state.h"
#include "tune/tuner.h"

namespace ansor::bench {

// The paper's fp32 GEMM and a ResNet-50 3×3 convolution, with const weights (packed by the
// schedules that choose to); the search benchmark's convolution with its epilogue in NHWC and
// a BERT-base feed-forward layer with bias and gelu.
inline constexpr const char* kPaperKernels = R"(
kernel matmul {
  A = input f32[1024, 1024]
  B = const f32[1024, 1024]
  C[i:1024, j:1024] = sum(k:1024, A[i, k] * B[k, j])
}
kernel conv2d {
  X = input f32[1, 128, 28, 28]
  W = const f32[128, 128, 3, 3]
  Y = conv2d_nchw(X, W, stride = 1, pad = 1)
}
kernel conv2d_nhwc_bias_relu {
  X = input f32[1, 28, 28, 128]
  W = const f32[3, 3, 128, 128]
  b = const f32[128]
  Y = relu(bias_add(conv2d_nhwc(X, W, stride = 1, pad = 1), b, axis = 3))
}
kernel dense_bias_gelu {
  X = input f32[128, 768]
  W = const f32[3072, 768]
  b = const f32[3072]
  Y = gelu(bias_add(dense(X, W), b, axis = 1))
}
)";

// "a,b,c" as {"a", "b", "c"}: the benchmarks' list options.
std::vector<std::string> split_list(const std::string& text);

// n floats drawn uniformly from [-1, 1], the same for the same seed.
std::vector<float> random_floats(size_t n, unsigned seed);

// A path under the system's temporary directory named for `tag` and this process.
std::string temp_path(const std::string& tag);

// A measurer of kernels on the host (at its default thread count) with the benchmarks' worker,
// building in work_dir.
std::unique_ptr<Measurer> host_measurer(const std::string& work_dir);

// Bench kernels are built for the host (-march=native) unless a benchmark names a CPU to build
// them for (x86-64-v3, alderlake: -march=<cpu>, its target's tensor features), before any is
// built: host_measurer and LoadedKernel then use that compiler and target.
void build_kernels_for_cpu(const std::string& cpu);

// The kernels.def text parsed; the kernel named `name`.
Kernel load_kernel(const std::string& text, const std::string& name);

// The kernel tuned until the cache holds options.trials of its measured schedules (records of an
// earlier run count, so a larger budget continues a smaller one), and the best of them replayed.
State tune_to_budget(const Kernel& kernel, Measurer& measurer, const TuningCache& cache, TuneOptions options);

// A kernel built from a schedule and loaded into this process.
class LoadedKernel {
 public:
  LoadedKernel(const std::string& kernel_name, const State& state, const std::string& work_dir);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  const ansor_kernel_info& info() const { return *info_; }

 private:
  void* handle_ = nullptr;
  const ansor_kernel_info* info_ = nullptr;
};

// Elements of a tensor argument.
int64_t elements(const ansor_tensor_info& t);

// Bytes of every argument of the kernel once: what a memory-bound call must move at least.
double argument_bytes(const ansor_kernel_info& kernel);

// A kernel's arguments: random inputs, an output buffer, and the const inputs packed once by the
// kernel's schedule, as a deployment packs its weights. Buffers hold each argument's dtype (bf16
// as its uint16_t bit pattern) and are cache-line aligned, as the measurement worker's are.
// Float inputs are drawn from [-1, 1] (bf16: those f32 values rounded to nearest even, moderate
// and finite, so that sums of their products neither overflow nor lose everything to rounding),
// except those named `var` (a batch_norm's variance), drawn from [0, 1] so that its square root
// is real; u8 and i8 inputs over their whole range. Inputs of other dtypes are refused.
struct KernelArguments {
  std::vector<AlignedVector<std::byte>> plain, packed;
  std::vector<void*> plain_ptrs, packed_ptrs;
  bool has_const = false;

  explicit KernelArguments(const ansor_kernel_info& kernel);
  // The inputs in argument order, unpacked (what a vendor library is given).
  std::vector<const void*> inputs() const;
  const void* output() const { return plain.back().data(); }
  size_t output_bytes() const { return plain.back().size(); }
};

// Checks a library's row-major output against ours (`output` describes both; `ours` is copied
// when the checker is made) under the project's one tolerance rule (dag/output_tolerance.h) for
// a workload of that tolerance. Elements are compared as doubles: integer outputs (tolerance 0)
// exactly, also beyond the 2^24 where a float would round them.
OutputChecker output_checker(const ansor_tensor_info& output, const void* ours, double tolerance);

// "12.3" GFLOP/s of `flops` done in `seconds`.
double gflops(double flops, double seconds);

}  // namespace ansor::bench
