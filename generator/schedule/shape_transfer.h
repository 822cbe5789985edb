// A schedule made for one shape of a computation, mapped to another shape of it: the steps
// replayed on the other DAG (same computation key, dag/computation_key.h), each split's lengths
// adapted to the extent its loop has there.
//
// Two ways to fit a split's lengths to the new extent (SplitFit): keep the innermost lengths,
// which carry the vector width and the register tile, and let the tail go ragged (lowering
// guards it); or take divisors of the extent nearest to the lengths, no tail but other vector
// and tile sizes. Which is faster depends on how well the target handles the tail, so tuning
// measures both. Steps that split like an
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

enum class SplitFit : uint8_t {
  // The innermost lengths kept while their product fits; an outer one that does not fit shrunk
  // to extent / (the product inside it), at least 1; the outermost loop takes the ceiling.
  KeepInner,
  // From the innermost, each length replaced by the divisor of what is left of the extent
  // nearest to it (by ratio; the larger on a tie): every loop divides its parent.
  Divisors,
};

// Split lengths (innermost last) for a loop of `extent`. Undecided lengths (0) stay undecided;
// an unknown extent (< 1) keeps them all. With whole_lanes > 1, an innermost length that is a
// whole number of such vectors stays one: the divisor fit takes the nearest divisor that is
// (no wider than the length), and keeps the length (a ragged tail) where the extent has none.
std::vector<int64_t> adapt_split_lengths(const std::vector<int64_t>& lengths, int64_t extent, SplitFit fit, int64_t whole_lanes = 0);

// The steps replayed on `dag`, splits adapted; nullopt, with the reason in `why`, when a step
// does not apply. vector_lanes (the target's f32 vector width, 0 for none) keeps the splits of
// a stage's innermost data axis, the one its vectors run along, in whole vectors.
std::optional<State> map_schedule(const std::vector<StepPtr>& steps, const std::shared_ptr<const ComputeDAG>& dag, SplitFit fit,
                                  std::string& why, int64_t vector_lanes = 0);

}  // namespace ansor
