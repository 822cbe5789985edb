// Tensorization: a loop nest that a schedule marks `tensorize` (ForKind::Tensorized) is computed
// by one call of a tensor intrinsic. Lowering keeps the nest as it is (its meaning, which every
// pass reads as ordinary loops and the features count) and finds the call here: the row of the
// target's table whose loop nest, product of converted operands and operand strides the nest
// has, and the first element of each operand.
#pragma once

#include <optional>
#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

// Where a tensorized loop of a GPU launch runs, for the rows a warp calls together: the variable
// of the loop bound to threadIdx.x around it, which spans the block's `threads` (a whole number
// of warps, one dimension), with no condition on the way that some lanes of a warp may fail.
// Without one (null `thread`: a CPU, or lanes that may diverge), warp rows are not matched.
struct WarpContext {
  const VarNode* thread = nullptr;
  int64_t threads = 0;
};

// The call of one of `rows` that the tensorized loop `loop` of `kernel` computes; nullopt when
// none does (the nest's shape, element types or operand layouts are no row's). A warp row also
// needs each lane's operands where the instruction's fragments take them from: lhs rows that
// depend only on the lane's g = lane / 4, rhs columns a constant stride apart along t = lane % 4
// and otherwise the same for the whole warp, and no guard that depends on the lane.
std::optional<TensorCall> match_tensor_call(const LoweredKernel& kernel, const ForNode& loop, const std::vector<const TensorIntrinsic*>& rows,
                                            const WarpContext& warp = {});

}  // namespace ansor
