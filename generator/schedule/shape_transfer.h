// A schedule made for one shape of a computation, mapped to another shape of it: the steps
// replayed on the other DAG (same computation key, dag/computation_key.h), each split's lengths
// adapted to the extent its loop has there.
//
// The innermost lengths carry the vector width and the register tile, so they are kept as long
// as they fit in the new extent; an outer level that does not fit shrinks to what is left, and
// the outermost loop (the split's implicit one) takes ceil(extent / tile). Lengths that do not
// divide the extent make a ragged split, which lowering guards. Steps that split like an
// earlier split (follow_split, follow_fused_split) follow its adapted lengths; every other step
// replays as it is. A schedule one of whose steps does not apply to the other DAG is not mapped:
// dropping a step would renumber the loops and steps that later steps name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "schedule/state.h"

namespace ansor {

// Split lengths (innermost last) for a loop of `extent`: the innermost kept while their product
// fits, an outer one that does not fit shrunk to extent / (the product inside it), at least 1.
// Undecided lengths (0) stay undecided; an unknown extent (< 1) keeps them all.
std::vector<int64_t> adapt_split_lengths(const std::vector<int64_t>& lengths, int64_t extent);

// The steps replayed on `dag`, splits adapted; nullopt, with the reason in `why`, when a step
// does not apply.
std::optional<State> map_schedule(const std::vector<StepPtr>& steps, const std::shared_ptr<const ComputeDAG>& dag, std::string& why);

}  // namespace ansor
