// Heuristic annotation of a sketch.
#include "sampler/default_schedule.h"

#include <algorithm>
#include <map>

#include "sampler/gpu_binding.h"
#include "sampler/sketch_generator.h"
#include "sampler/sketch_rule.h"
#include "schedule/bound_inference.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// The innermost tile of a vector axis: two vectors, or one, where they divide the extent;
// otherwise the same with a ragged last tile (lowering masks its missing lanes), two vectors
// where the loop runs long enough for the wider tile's waste not to matter. A loop shorter than
// a vector is one partial vector.
int64_t whole_vector_tile(int64_t extent, int64_t lanes) {
  if (extent <= lanes) return extent;
  if (extent % (2 * lanes) == 0) return 2 * lanes;
  if (extent % lanes == 0 || extent < kMinRaggedVectorTrips * 2 * lanes) return lanes;
  return 2 * lanes;
}

// Tile lengths of one split of a sketch: vector-wide innermost tiles for the innermost spatial
// axis, small register tiles for the others, short reduction tiles.
std::vector<int64_t> heuristic_lengths(const State& s, const SplitStep& split, const SamplerContext& ctx) {
  const Stage& st = s.stage(split.stage);
  const Iterator& it = st.leaf(split.iter);
  int64_t extent = std::max<int64_t>(1, it.extent);
  int node = st.leaves[split.iter];
  bool innermost_axis = node == st.num_spatial_roots() - 1;
  std::vector<int64_t> lengths(split.lengths.size(), 1);
  if (it.kind != IterKind::Spatial) {
    lengths.back() = largest_divisor_at_most(extent, 8);
    return lengths;
  }
  // The outer part of an axis split by a tile row's rows or lanes (tensorized_tiling): the tile
  // product is the register tile already; two of them at most, the rest left to the parallel
  // and outer loops.
  if (node >= st.num_roots) {
    lengths.back() = largest_divisor_at_most(extent, 2);
    return lengths;
  }
  int64_t inner = innermost_axis ? whole_vector_tile(extent, stage_vector_lanes(st, ctx.vector_lanes)) : largest_divisor_at_most(extent, 8);
  lengths.back() = inner;
  if (lengths.size() >= 3) lengths.front() = largest_divisor_at_most((extent + inner - 1) / inner, innermost_axis ? 2 : 4);
  return lengths;
}

// GPU tile lengths (SSSRRSRS): per spatial axis [virtual threads, threads, inner, register
// tile], per reduction axis [inner, innermost]; a warp tile's rows and columns [virtual threads,
// warps]. From the innermost spatial axis outwards, a
// register tile of up to 4 (2 for the others) and threads from a block's budget of 256 (at
// most 32 per axis): small register tiles keep every thread's accumulators in registers, and
// blocks of 128 to 256 threads fill the GPU. Reduction tiles of up to 8 elements make the
// shared-memory slices the block reads per step.
std::vector<int64_t> gpu_heuristic_lengths(const State& s, const SplitStep& split, int64_t& thread_budget) {
  const Stage& st = s.stage(split.stage);
  const Iterator& it = st.leaf(split.iter);
  const int64_t extent = std::max<int64_t>(1, it.extent);
  std::vector<int64_t> lengths(split.lengths.size(), 1);
  if (it.kind != IterKind::Spatial) {
    lengths.front() = largest_divisor_at_most(extent, 8);
    return lengths;
  }
  // A warp tile's [virtual threads, warps] of its rows and columns (warp_tiling.cpp): two warps
  // along each, four per block; one along the other axes.
  if (lengths.size() == 2 && st.leaves[split.iter] >= st.num_roots) {
    lengths[1] = largest_divisor_at_most(extent, 2);
    return lengths;
  }
  if (lengths.size() < 4) return lengths;
  const bool innermost_axis = st.leaves[split.iter] == st.num_spatial_roots() - 1;
  const int64_t tile = largest_divisor_at_most(extent, innermost_axis ? 4 : 2);
  const int64_t threads = largest_divisor_at_most(extent / tile, std::min<int64_t>(32, thread_budget));
  thread_budget /= std::max<int64_t>(1, threads);
  lengths[1] = threads;
  lengths[3] = tile;
  return lengths;
}

// A power of two of threads per block for `extent` iterations: up to 256, no more than needed.
int64_t gpu_block_threads(int64_t extent) {
  int64_t threads = 32;
  while (threads < 256 && threads < extent) threads *= 2;
  return threads;
}

// The default GPU program of a sketch: heuristic tiles (the spatial axes innermost first, so
// that the innermost gets the thread budget first), reductions across threads of about a
// quarter of their extent, every stage bound, reductions unrolled moderately.
State default_gpu_schedule(const std::shared_ptr<const ComputeDAG>& dag, const Sketch& sketch, const SamplerContext& ctx) {
  const std::vector<StepPtr>& steps = sketch.state.steps();
  std::vector<State> before;  // the state each step applies to
  State replay(dag);
  for (const StepPtr& step : steps) {
    before.push_back(replay);
    replay.apply(step);
  }
  // A stage's splits come outermost axis first; the threads go to the innermost first.
  std::map<int, int64_t> thread_budget;  // per stage
  std::map<size_t, std::vector<int64_t>> lengths;
  for (size_t k = steps.size(); k-- > 0;) {
    auto* split = dynamic_cast<const SplitStep*>(steps[k].get());
    if (!split || std::find(split->lengths.begin(), split->lengths.end(), 0) == split->lengths.end()) continue;
    const State& at = before[k];
    const int64_t extent = at.stage(split->stage).leaf(split->iter).extent;
    if (is_cross_thread_split(steps, k)) {
      std::vector<int64_t> counts = reduction_thread_counts(extent, ctx);
      int64_t chosen = counts.front();
      for (int64_t c : counts)
        if (c <= 256 && 4 * c <= extent) chosen = c;
      lengths[k] = {chosen};
    } else {
      lengths[k] = gpu_heuristic_lengths(at, *split, thread_budget.try_emplace(split->stage, 256).first->second);
    }
  }
  State s(dag);
  for (size_t k = 0; k < steps.size(); ++k) {
    auto* split = dynamic_cast<const SplitStep*>(steps[k].get());
    s.apply(lengths.count(k) ? std::make_shared<SplitStep>(split->stage, split->iter, lengths[k]) : steps[k]);
  }
  infer_bounds(s);
  // A fetch loads the widest vector (of 4 or 2 four-byte lanes) of which every thread gets one.
  bind_gpu_threads(s, {gpu_block_threads, [](int64_t extent, int64_t threads) { return extent >= 4 * threads ? 4 : extent >= 2 * threads ? 2 : 1; }});
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (!st.is_placeholder() && st.location != ComputeLocation::Inlined && !st.leaves.empty() && st.op->reduction())
      s.try_apply(std::make_shared<PragmaStep>(i, 0, PragmaKind::AutoUnrollMaxStep, 64));
  }
  infer_bounds(s);
  return s;
}

int attached_stages(const State& s) {
  int n = 0;
  for (int i = 0; i < s.num_stages(); ++i) n += s.stage(i).location == ComputeLocation::At;
  return n;
}

}  // namespace

State default_schedule(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx) {
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
  // Tiles fused into their consumer at the second level are the usual best structure; without
  // tiles, the most stages computed inside others (rows fused, partial results in registers).
  const Sketch* chosen = &sketches.front();
  for (const Sketch& sk : sketches)
    if (attached_stages(sk.state) > attached_stages(chosen->state)) chosen = &sk;
  for (const Sketch& sk : sketches)
    for (const std::string& d : sk.derivation)
      if (d.rfind("multi-level-tiling-with-fusion", 0) == 0) chosen = &sk;
  if (ctx.gpu) {
    // On GPUs, tiles that read their inputs through shared memory first.
    auto derived_by = [](const Sketch& sk, const char* rule) {
      return std::any_of(sk.derivation.begin(), sk.derivation.end(), [&](const std::string& d) { return d.rfind(rule, 0) == 0; });
    };
    for (const Sketch& sk : sketches)
      if (derived_by(sk, "shared-cache-read") && derived_by(sk, "multi-level-tiling-with-fusion")) return default_gpu_schedule(dag, sk, ctx);
    for (const Sketch& sk : sketches)
      if (derived_by(sk, "shared-cache-read")) return default_gpu_schedule(dag, sk, ctx);
    return default_gpu_schedule(dag, *chosen, ctx);
  }
  State s(dag);
  for (const StepPtr& step : chosen->state.steps()) {
    auto* split = dynamic_cast<const SplitStep*>(step.get());
    bool undecided = split && std::find(split->lengths.begin(), split->lengths.end(), 0) != split->lengths.end();
    s.apply(undecided ? std::make_shared<SplitStep>(split->stage, split->iter, heuristic_lengths(s, *split, ctx)) : step);
  }
  infer_bounds(s);
  // Two vectors per iteration of long innermost loops, before the outer loops are fused.
  for (int i = 0; i < s.num_stages(); ++i)
    if (!s.stage(i).is_placeholder() && s.stage(i).location != ComputeLocation::Inlined) vectorize_innermost_axis(s, i, 2 * ctx.vector_lanes);
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined) continue;
    if (st.location == ComputeLocation::Root) {
      const int leading = parallelizable_loops(s, i);
      int count = 0;
      int64_t extent = 1;
      while (count < leading && extent < ctx.parallelism * 4) extent *= std::max<int64_t>(1, s.stage(i).leaf(count++).extent);
      if (count > 1) {
        std::vector<int> loops(count);
        for (int p = 0; p < count; ++p) loops[p] = p;
        s.try_apply(std::make_shared<FuseStep>(i, loops));
      }
      if (count > 0 && extent > 1) s.try_apply(std::make_shared<AnnotateStep>(i, 0, IterAnnotation::Parallel));
    }
  }
  infer_bounds(s);
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined || st.leaves.empty()) continue;
    int last = static_cast<int>(st.leaves.size()) - 1;
    const Iterator& it = st.leaf(last);
    bool vectorize = it.kind == IterKind::Spatial && it.annotation == IterAnnotation::None && it.extent >= 2 && it.extent <= 64;
    bool reduction = st.op->reduction() != nullptr;
    // Applying a step replaces the state's stages: read everything first.
    if (vectorize) s.try_apply(std::make_shared<AnnotateStep>(i, last, IterAnnotation::Vectorize));
    if (reduction) s.try_apply(std::make_shared<PragmaStep>(i, 0, PragmaKind::AutoUnrollMaxStep, 64));
  }
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (!st.is_placeholder() || !(st.op->is_const || is_tensorized_rhs(s, i))) continue;
    std::vector<int> consumers = s.consumers(i);
    if (consumers.size() == 1 && !s.stage(consumers[0]).relations.empty()) s.try_apply(std::make_shared<LayoutRewriteStep>(i));
  }
  infer_bounds(s);
  return s;
}

}  // namespace ansor
