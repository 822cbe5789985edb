// How operations access each other: the facts the sketch derivation rules read (paper §4.1).
//
// The predicates take operations rather than DAG positions so that the same tests apply to
// stages a schedule created (cache stages, rfactor stages).
#pragma once

#include <vector>

#include "dag/operation.h"

namespace ansor {

// Elementwise without branches or expensive math, every read indexed by single axes (each
// used once, plus constant offsets): inlining it into its consumers costs nothing.
bool is_strictly_inlinable(const Operation& op);

// A reduction whose reads miss enough of its spatial axes that tiling creates data reuse
// (matmul, convolution); these get the multi-level tiling structure.
bool needs_multi_level_tiling(const Operation& op);

// The consumer reads the producer only at exactly its own axes, in order, and has the same
// shape: it can be computed inside the producer's tiles.
bool elementwise_match(const Operation& producer, const Operation& consumer);

// A reduction with little spatial parallelism and a long reduction: worth an rfactor.
bool has_more_reduction_parallel(const Operation& op, int parallelism);

// Product of the spatial extents and of the reduction extents.
int64_t spatial_size(const Operation& op);
int64_t reduction_size(const Operation& op);

}  // namespace ansor
