// The last pass of lowering: the decisions that depend on the target a program is printed for,
// taken here so that code generators only print and the lowered program shows everything the
// compiled one does.
//
// For a CUDA target: the launches (grid, block, shared memory, tail guards, lower/gpu_launch.h),
// the vectorized loops that are one vector copy, and 32-bit index arithmetic where every buffer
// and loop fits (GPUs compute 64-bit integers in several instructions). For a CPU target: 64-bit
// indices, the runs of accumulation steps combined as one balanced tree, and the cache line that
// prefetches step by. The kernel's packers get the same decisions.
#pragma once

#include <cstddef>

#include "lower/lowered_kernel.h"
#include "target/target.h"

namespace ansor {

// A run of at least this many accumulation steps A[c] = A[c] op B[j], A[c] op B[j + 1], ... (the
// lanes of a vectorised partial reduction folded one by one) is combined as one balanced tree.
inline constexpr size_t kMinHorizontalReduction = 4;

// Vector copies on GPUs move 2 to 8 elements of 2 or 4 bytes as one access of 4, 8 or 16 bytes.
inline constexpr int kVectorCopyMaxBytes = 16;

void take_codegen_decisions(LoweredKernel& kernel, const Target& target);

}  // namespace ansor
