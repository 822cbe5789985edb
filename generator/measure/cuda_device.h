// CUDA on this machine: the compiler (nvcc) and the device, asked of the CUDA runtime by a small
// probe that nvcc builds. Tuning for a CUDA target measures on a device of its architecture;
// emitting needs neither.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "target/target.h"

namespace ansor {

// The CUDA compiler: $ANSOR_NVCC, $CUDACXX, nvcc on the PATH, $CUDA_HOME/bin/nvcc or
// /usr/local/cuda/bin/nvcc, the first that exists; empty when there is none.
std::string find_nvcc();

// The kernel flags of a CUDA target: -O3 and its architecture.
std::vector<std::string> cuda_kernel_flags(const Target& target);

struct CudaDevice {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  Target target;     // cuda:sm_XX with the device's own limits
};

// The first CUDA device, asked once per process; nothing, with the reason in `why`, when nvcc or a
// device is missing or the runtime cannot be asked.
std::optional<CudaDevice> probe_cuda_device(const std::string& nvcc, std::string& why);

// A CUDA target named as the CLI and CMake name it: `cuda:sm_XX` from the table of
// architectures, `cuda` the device present (std::runtime_error when there is none).
Target resolve_cuda_target(const std::string& text);

}  // namespace ansor
