// The default schedule: what a kernel gets without a tuned record. A sketch annotated with
// tile sizes and annotations chosen by rule of thumb (register tiles of a vector's width,
// parallel outer loops, vectorised inner loops, moderate unrolling) rather than at random:
// sound everywhere, never measured.
#pragma once

#include <memory>

#include "sampler/sampler_context.h"
#include "schedule/state.h"

namespace ansor {

State default_schedule(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx);

}  // namespace ansor
