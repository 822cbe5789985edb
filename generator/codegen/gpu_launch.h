// A GPU program as launches: each top-level statement of a lowered kernel is one kernel launch,
// its outermost loops bound to block indices giving the grid and the loops bound to thread
// indices inside giving the block. What the CUDA code generator prints and what the limits of
// a GPU target are checked against.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lower/gpu_sync.h"
#include "target/target.h"

namespace ansor {

struct GpuLaunch {
  Stmt body;                              // inside the block loops
  std::vector<const ForNode*> block_loops;  // outermost first
  std::array<int64_t, 3> grid = {1, 1, 1};
  ThreadDims block = {1, 1, 1};
  // The shared buffers of one block, each at its offset in the block's shared memory (bytes).
  std::vector<std::pair<const Buffer*, int64_t>> shared;
  int64_t shared_bytes = 0;
  int64_t local_bytes = 0;     // of one thread's local buffers, all at once (an upper bound)
  int thread_reductions = 0;   // reductions across threads, each with a little shared memory of its own

  int64_t threads() const { return block[0] * block[1] * block[2]; }
};

// Shared buffers start at multiples of this many bytes (a vector of four floats).
inline constexpr int64_t kSharedAlignment = 16;
// Bytes of shared memory one reduction across threads (of whole warps) keeps for the warps'
// results: 32 values of up to 8 bytes.
inline constexpr int64_t kThreadReductionSharedBytes = 32 * 8;

std::vector<GpuLaunch> gpu_launches(const LoweredKernel& kernel);

// Throws InvalidState naming the limit that a launch of the kernel exceeds: threads per block,
// shared memory per block, grid size, registers (one thread's local buffers, in 32-bit
// registers, may take at most half of a thread's), or a reduction across a thread count that
// cannot combine values (GpuLimits::reduces_across). Parallel loops and heap buffers have no GPU
// form and are refused too.
void check_gpu_limits(const LoweredKernel& kernel, const GpuLimits& limits);

}  // namespace ansor
