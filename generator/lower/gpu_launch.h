// A GPU program as launches: each top-level statement of a lowered kernel is one kernel launch,
// its outermost loops bound to block indices giving the grid and the loops bound to thread
// indices inside giving the block (GpuLaunch, lowered_kernel.h). Lowering for a GPU target
// stores them in the kernel (codegen_decisions.h); the CUDA code generator prints them and the
// limits of a GPU target are checked against them.
#pragma once

#include <cstdint>
#include <vector>

#include "lower/gpu_sync.h"
#include "target/target.h"

namespace ansor {

// Shared buffers start at multiples of this many bytes (a vector of four floats).
inline constexpr int64_t kSharedAlignment = 16;
// Bytes of shared memory one reduction across threads (of whole warps) keeps for the warps'
// results: 32 values of up to 8 bytes.
inline constexpr int64_t kThreadReductionSharedBytes = 32 * 8;
// The dynamic shared memory a block gets without the kernel's consent
// (cudaFuncAttributeMaxDynamicSharedMemorySize).
inline constexpr int64_t kSharedBytesWithoutOptIn = 48 * 1024;

std::vector<GpuLaunch> gpu_launches(const LoweredKernel& kernel);

// Throws InvalidState naming the limit that a launch of the kernel exceeds: threads per block,
// shared memory per block, grid size, registers (one thread's local buffers, in 32-bit
// registers, may take at most half of a thread's), or a reduction across a thread count that
// cannot combine values (GpuLimits::reduces_across). Parallel loops and heap buffers have no GPU
// form and are refused too. Throws std::invalid_argument for a kernel not lowered for a GPU
// target (it has no launches).
void check_gpu_limits(const LoweredKernel& kernel, const GpuLimits& limits);

}  // namespace ansor
