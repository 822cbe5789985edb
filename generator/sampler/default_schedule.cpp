// Heuristic annotation of a sketch.
#include "sampler/default_schedule.h"

#include <algorithm>

#include "sampler/sketch_generator.h"
#include "schedule/bound_inference.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
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
  int64_t inner = innermost_axis ? largest_divisor_at_most(extent, 2 * ctx.vector_lanes) : largest_divisor_at_most(extent, 8);
  lengths.back() = inner;
  if (lengths.size() >= 3) lengths.front() = largest_divisor_at_most(extent / inner, innermost_axis ? 2 : 4);
  return lengths;
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
  State s(dag);
  for (const StepPtr& step : chosen->state.steps()) {
    auto* split = dynamic_cast<const SplitStep*>(step.get());
    bool undecided = split && std::find(split->lengths.begin(), split->lengths.end(), 0) != split->lengths.end();
    s.apply(undecided ? std::make_shared<SplitStep>(split->stage, split->iter, heuristic_lengths(s, *split, ctx)) : step);
  }
  if (ctx.gpu) return s;
  infer_bounds(s);
  // Two vectors per iteration of long innermost loops, before the outer loops are fused.
  for (int i = 0; i < s.num_stages(); ++i)
    if (!s.stage(i).is_placeholder() && s.stage(i).location != ComputeLocation::Inlined) vectorize_innermost_axis(s, i, 2 * ctx.vector_lanes);
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined) continue;
    if (st.location == ComputeLocation::Root) {
      int count = 0;
      int64_t extent = 1;
      while (count < static_cast<int>(st.leaves.size()) && st.leaf(count).kind == IterKind::Spatial &&
             st.leaf(count).annotation == IterAnnotation::None && extent < ctx.parallelism * 4)
        extent *= std::max<int64_t>(1, s.stage(i).leaf(count++).extent);
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
    if (reduction) s.try_apply(std::make_shared<PragmaStep>(i, 0, 64));
  }
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (!st.is_placeholder() || !st.op->is_const) continue;
    std::vector<int> consumers = s.consumers(i);
    if (consumers.size() == 1 && !s.stage(consumers[0]).relations.empty()) s.try_apply(std::make_shared<LayoutRewriteStep>(i));
  }
  infer_bounds(s);
  return s;
}

}  // namespace ansor
