// Lowering: a schedule State to the loop program that is compiled.
//
// Bound inference (schedule/bound_inference.h) gives every computed stage its loops and the
// region it computes. A stage computed at the root stores into the kernel argument (outputs)
// or a workspace tensor; a stage attached inside another (compute_at) into a buffer of its
// region's shape. Iterations that ragged splits or over-approximated regions add are guarded,
// and only where the guard cannot be proven redundant. Reductions initialise above their first
// reduction loop; one whose only reduction loop is bound to threadIdx.x is a reduction across
// the threads of a block instead (ThreadReduction, stmt.h). The passes of loop_passes.h then
// take every remaining decision but those of the target, which codegen_decisions.h takes last.
#pragma once

#include <string>

#include "lower/lowered_kernel.h"
#include "schedule/bound_inference.h"
#include "schedule/state.h"
#include "target/target.h"

namespace ansor {

struct LowerOptions {
  // Short unrolled loops are written out as copies of their body, as they are compiled. The
  // cost model's features keep them ForKind::Unrolled loops instead: one row per statement of
  // the schedule, not per copy.
  bool expand_unrolled_loops = true;
  // The machine the program is printed for: a CUDA target makes it launches of GPU kernels
  // (codegen_decisions.h).
  Target target;
};

// Throws InvalidState.
LoweredKernel lower_state(const State& state, const std::string& function_name, const LowerOptions& options = {});

}  // namespace ansor
