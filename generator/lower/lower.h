// Lowering: a schedule State to a loop program.
//
// Inlined stages are substituted into their consumers. A stage computed at the root loops over
// its whole domain and stores into the kernel argument (outputs) or a workspace tensor. A stage
// attached inside another (compute_at) computes only the region that one iteration of the
// enclosing loops needs (bound inference) into a buffer of that region's shape. Iterations that
// ragged splits or over-approximated regions add are guarded, and only where the guard cannot be
// proven redundant. Reductions initialise above their first reduction loop.
#pragma once

#include <stdexcept>
#include <string>

#include "lower/lowered_kernel.h"
#include "schedule/state.h"

namespace ansor {

// A state that no valid step sequence produces (a lowering bug or a hand-made state).
class InvalidState : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

LoweredKernel lower_state(const State& state, const std::string& function_name);

// Sets the extent of every loop of every computed stage to what it is where the stage is
// computed (attached stages loop over their region). Throws InvalidState.
void infer_bounds(State& state);

// Marks serial loops whose fully unrolled body has at most max_steps statements as unrolled,
// innermost first (the auto_unroll_max_step pragma).
Stmt apply_auto_unroll(const Stmt& s, int max_steps);

}  // namespace ansor
