// Lowering: a schedule State to the loop program that is compiled.
//
// Bound inference (schedule/bound_inference.h) gives every computed stage its loops and the
// region it computes. A stage computed at the root stores into the kernel argument (outputs)
// or a workspace tensor; a stage attached inside another (compute_at) into a buffer of its
// region's shape. Iterations that ragged splits or over-approximated regions add are guarded,
// and only where the guard cannot be proven redundant. Reductions initialise above their first
// reduction loop. The passes of loop_passes.h then take every remaining decision.
#pragma once

#include <string>

#include "lower/lowered_kernel.h"
#include "schedule/bound_inference.h"
#include "schedule/state.h"

namespace ansor {

// Throws InvalidState.
LoweredKernel lower_state(const State& state, const std::string& function_name);

}  // namespace ansor
