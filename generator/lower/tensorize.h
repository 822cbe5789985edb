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

// The call of one of `rows` that the tensorized loop `loop` of `kernel` computes; nullopt when
// none does (the nest's shape, element types or operand layouts are no row's).
std::optional<TensorCall> match_tensor_call(const LoweredKernel& kernel, const ForNode& loop, const std::vector<const TensorIntrinsic*>& rows);

}  // namespace ansor
