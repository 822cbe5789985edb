// What the benchmarks share: timing a callable the way the tuner does (a warm-up call, then
// calls until a minimum time, the median kept), building kernels of a State and loading them.
#pragma once

#include <ansor/runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "lang/program.h"
#include "schedule/state.h"

namespace ansor::bench {

// Median seconds of one call over calls adding up to at least min_seconds (and 5 calls).
double median_seconds(const std::function<void()>& call, double min_seconds = 0.5);

// The kernels.def text parsed; the kernel named `name`.
Kernel load_kernel(const std::string& text, const std::string& name);

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

// "12.3" GFLOP/s of `flops` done in `seconds`.
double gflops(double flops, double seconds);

}  // namespace ansor::bench
