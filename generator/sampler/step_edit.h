// Reading and rewriting the fields of transform steps, for mutation and crossover, which build
// new step lists from old ones: the stage a step works on, whether it places a stage, and the
// same step with the loop positions of one stage renumbered.
#pragma once

#include <functional>

#include "schedule/step.h"

namespace ansor {

// The stage a step works on, as numbered when it applies (compute_at: the stage it moves).
int step_stage(const Step& step);

// compute_at, compute_inline, compute_root.
bool is_location_step(const Step& step);

// The step with every loop position p of `stage` that it names (its own loops, or for
// compute_at the target's) replaced by map(p): the same step when none changes, nullptr when
// map gives -1 for one of them (the loop is gone) or the step reorders the stage's loops.
StepPtr remap_loops(const StepPtr& step, int stage, const std::function<int(int)>& map);

}  // namespace ansor
