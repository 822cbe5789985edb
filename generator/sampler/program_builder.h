// Rebuilding complete programs from edited step lists, for mutation and crossover.
//
// Steps apply one at a time, so that an edit can look at the state before the step it changes.
// A split that spreads a shared-memory copy over the threads of its block (the annotator's
// cooperative fetch, its lengths the threads and the lanes of a vector load) takes the block's
// thread count as it is when the split applies: tile sizes decide that count, and a mutated
// tile would otherwise leave the copy on the old number of threads. A finished program must infer bounds and, on a GPU, respect the thread limits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sampler/sampler_context.h"
#include "schedule/state.h"

namespace ansor {

// The threads (threadIdx.x) that run the loops of `stage` down to leaf position `depth` (-1:
// none of its own), found there or around the loop the stage is computed in; 0 when none is
// bound or their number is not known yet.
int64_t threads_around(const State& s, int stage, int depth);

// Whether every thread block of the program has at most the limit's threads and shared memory,
// every local buffer of a thread at most half of its registers, every virtual-thread loop at
// most ctx.max_vthreads iterations, and every reduction across threads a thread count that can
// combine values (GpuLimits::reduces_across), estimated on the State; and then, when the
// context has one, that its launch_problem check of the lowered program finds none. Bounds must
// be inferred.
bool within_gpu_limits(const State& s, const SamplerContext& ctx);

class ProgramBuilder {
 public:
  ProgramBuilder(std::shared_ptr<const ComputeDAG> dag, SamplerContext ctx) : ctx_(std::move(ctx)), state_(std::move(dag)) {}

  const State& state() const { return state_; }
  // Applies the step (a cooperative-fetch split adjusted as above). False, with the state
  // unchanged, when it does not apply.
  bool apply(const StepPtr& step);
  // Applies steps [begin, end) of the list; false at the first that does not apply.
  bool apply(const std::vector<StepPtr>& steps, size_t begin, size_t end);
  // The program with its bounds inferred; nothing when inference fails or, on a GPU, a limit
  // is exceeded.
  std::optional<State> finish() const;

 private:
  SamplerContext ctx_;
  State state_;
};

// The program the steps build, as ProgramBuilder builds it; nothing when a step does not apply
// or finish() fails.
std::optional<State> build_program(const std::shared_ptr<const ComputeDAG>& dag, const std::vector<StepPtr>& steps,
                                   const SamplerContext& ctx);

}  // namespace ansor
