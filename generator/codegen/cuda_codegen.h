// CUDA code generation: a lowered GPU kernel becomes `__global__` functions, one per launch
// (lower/gpu_launch.h), and host functions with the C interface of the CPU library over
// device pointers.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_signature.h"
#include "lower/lowered_kernel.h"

namespace ansor {

// The C functions of one kernel, over device pointers; each returns 0, or the cudaError_t of
// the first CUDA call that failed (a launch, the workspace's allocation):
//   int symbol(params...)                        the kernel on plain tensors, on the default
//                                                stream; returns when the GPU has finished
//   int symbol_stream(params..., cudaStream_t)   the same, queued on the stream (asynchronous)
//   int symbol_packed(params...), int symbol_packed_stream(params..., cudaStream_t)
//                                                with const inputs in packed form
//   int symbol_pack_W(const T* W, T* W_packed), int64_t symbol_W_packed_elements(void)
//                                                for every const input W (synchronous)
// Intermediate tensors live in device memory allocated in stream order for the call. Throws
// std::invalid_argument for a program with no GPU form (a parallel loop, a heap buffer) or not
// lowered for a GPU target.
std::string emit_cuda_kernel(const LoweredKernel& kernel, const std::vector<ParamDecl>& params, const std::string& symbol);

}  // namespace ansor
