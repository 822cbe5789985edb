// Arithmetic over a stage's iterator relations: the extent of every iterator given the extents
// of the roots, and the value of every iterator given the values of the loops. Shared by
// lowering (bound inference, index expressions) and by steps that rebuild operations (rfactor).
#pragma once

#include <vector>

#include "ir/expr.h"
#include "schedule/stage.h"

namespace ansor {

// root_extents holds one extent per root; the result one per iterator, -1 where a split length
// is still undecided.
std::vector<int64_t> propagate_extents(const Stage& stage, const std::vector<int64_t>& root_extents);

// values holds an expression for every leaf (other entries null); fills in every other
// iterator: a split's parent from its parts, a fuse's inputs from the fused loop.
void propagate_values(const Stage& stage, const std::vector<int64_t>& extents, std::vector<Expr>& values);

// Whether the iterator depends on a reduction axis, per iterator.
std::vector<bool> reduction_iterators(const Stage& stage);

}  // namespace ansor
