// Step-by-step program rebuilding with the cooperative-fetch adjustment and the GPU limits.
#include "sampler/program_builder.h"

#include <algorithm>
#include <array>
#include <map>

#include "schedule/bound_inference.h"
#include "schedule/steps.h"

namespace ansor {

int64_t threads_around(const State& s, int stage, int depth) {
  const Stage& st = s.stage(stage);
  for (int p = 0; p <= depth; ++p) {
    const Iterator& it = st.leaf(p);
    if (it.annotation == IterAnnotation::ThreadX) return it.extent > 0 ? it.extent : 0;
  }
  if (st.location != ComputeLocation::At) return 0;
  return threads_around(s, st.attach_stage, s.stage(st.attach_stage).leaf_position(st.attach_iter));
}

bool within_gpu_limits(const State& s, const SamplerContext& ctx) {
  // Per outermost stage (the block): the widest loop bound to each thread index inside it, and
  // its shared memory in bytes.
  std::map<int, std::array<int64_t, 3>> block_threads;
  std::map<int, int64_t> block_shared;
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined) continue;
    int root = i;
    while (s.stage(root).location == ComputeLocation::At) root = s.stage(root).attach_stage;
    std::array<int64_t, 3>& dims = block_threads.try_emplace(root, std::array<int64_t, 3>{1, 1, 1}).first->second;
    for (int leaf : st.leaves) {
      const Iterator& it = st.iters[leaf];
      if (it.annotation == IterAnnotation::VThread && it.extent > ctx.max_vthreads) return false;
      int axis = thread_axis(it.annotation);
      if (axis >= 0) dims[axis] = std::max(dims[axis], it.extent);
      if (axis >= 0 && it.kind != IterKind::Spatial && !ctx.gpu_limits.reduces_across(it.extent)) return false;
    }
    int64_t elements = 1;
    for (int d = 0; d < st.num_spatial_roots(); ++d) elements *= std::max<int64_t>(1, st.iters[d].extent);
    if (st.scope == MemoryScope::Shared) block_shared[root] += elements * dtype_bytes(st.op->dtype);
    // A thread's local buffers (a tile's accumulators) take registers: half of them at most, as
    // lower/gpu_launch.h checks the lowered program.
    if (st.scope == MemoryScope::Local && st.location == ComputeLocation::At &&
        elements * std::max(4, dtype_bytes(st.op->dtype)) > 2 * int64_t{ctx.gpu_limits.max_registers_per_thread})
      return false;
  }
  for (const auto& [root, dims] : block_threads)
    if (dims[0] * dims[1] * dims[2] > ctx.gpu_limits.max_threads_per_block) return false;
  for (const auto& [root, bytes] : block_shared)
    if (bytes > ctx.gpu_limits.max_shared_bytes_per_block) return false;
  return !ctx.launch_problem || ctx.launch_problem(s).empty();
}

namespace {

// The annotator's cooperative fetch: a shared-memory stage computed inside another, its loops
// fused into one and split by the number of threads (and the lanes of its vector loads).
bool is_cooperative_fetch(const State& s, const SplitStep& split) {
  if (split.stage < 0 || split.stage >= s.num_stages() || split.lengths.empty() || split.lengths.size() > 2 || split.iter != 0)
    return false;
  const Stage& st = s.stage(split.stage);
  return st.scope == MemoryScope::Shared && st.location == ComputeLocation::At && st.leaves.size() == 1;
}

}  // namespace

bool ProgramBuilder::apply(const StepPtr& step) {
  StepPtr adjusted = step;
  if (auto* split = dynamic_cast<const SplitStep*>(step.get()); split && ctx_.gpu && is_cooperative_fetch(state_, *split)) {
    int64_t threads = threads_around(state_, split->stage, -1);
    if (threads > 0 && threads != split->lengths[0]) {
      std::vector<int64_t> lengths = split->lengths;
      lengths[0] = threads;
      adjusted = std::make_shared<SplitStep>(split->stage, split->iter, lengths);
    }
  }
  return state_.try_apply(adjusted);
}

bool ProgramBuilder::apply(const std::vector<StepPtr>& steps, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k)
    if (!apply(steps[k])) return false;
  return true;
}

std::optional<State> ProgramBuilder::finish() const {
  State s = state_;
  try {
    infer_bounds(s);
  } catch (const InvalidState&) {
    return std::nullopt;
  } catch (const StepError&) {
    return std::nullopt;
  }
  if (ctx_.gpu && !within_gpu_limits(s, ctx_)) return std::nullopt;
  return s;
}

std::optional<State> build_program(const std::shared_ptr<const ComputeDAG>& dag, const std::vector<StepPtr>& steps,
                                   const SamplerContext& ctx) {
  ProgramBuilder builder(dag, ctx);
  if (!builder.apply(steps, 0, steps.size())) return std::nullopt;
  return builder.finish();
}

}  // namespace ansor
