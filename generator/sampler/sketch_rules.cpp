// The derivation rules for CPUs and GPUs.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "dag/access_analysis.h"
#include "sampler/sketch_rule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

using Condition = SketchRule::Condition;
using Successors = std::vector<std::pair<State, int>>;

// The tiling structure of the target: SSRSRS on CPUs, SSSRRSRS on GPUs (block, virtual thread,
// thread, then serial levels).
std::string tiling_structure(const SamplerContext& ctx) { return ctx.gpu ? "SSSRRSRS" : "SSRSRS"; }

// On GPUs, tiles read their inputs through shared memory: the cache stages are computed
// inside the tiled stage's outermost reduction loop.
State attach_shared_reads(const SamplerContext& ctx, State s, int stage) {
  if (!ctx.gpu) return s;
  const Stage& st = s.stage(stage);
  int first_reduce = -1;
  for (size_t p = 0; p < st.leaves.size(); ++p) {
    if (st.leaf(static_cast<int>(p)).kind == IterKind::Reduce) {
      first_reduce = static_cast<int>(p);
      break;
    }
  }
  if (first_reduce < 0) return s;
  for (int p = 0; p < stage; ++p) {
    const Stage& producer = s.stage(p);
    if (producer.scope != MemoryScope::Shared || producer.location != ComputeLocation::Root) continue;
    std::vector<int> readers = s.readers(p);
    if (readers.size() == 1 && readers[0] == stage) s.apply(std::make_shared<ComputeAtStep>(p, stage, first_reduce));
  }
  return s;
}

// CPU: elementwise stages without branches or costly functions are computed where they are
// read. GPU: every elementwise stage is: a stage of its own is a launch of its own and a round
// trip through device memory, which costs far more than computing an exp twice.
class AlwaysInline final : public SketchRule {
 public:
  std::string name() const override { return "always-inline"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    bool inlinable = ctx.gpu ? !st.op->reduction() : is_strictly_inlinable(*st.op);
    bool inline_it = !st.is_placeholder() && st.location == ComputeLocation::Root && inlinable &&
                     !s.is_kernel_output(stage) && !s.readers(stage).empty() && !s.has_attached(stage);
    return inline_it ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  Successors apply(const SamplerContext&, const State& s, int stage) const override {
    State next = s;
    next.apply(std::make_shared<ComputeInlineStep>(stage));
    return {{next, stage - 1}};
  }
};

// The position of the row loop of `target` for `op`: the loop outside the dimensions that op,
// a reduction keeping them, reduces (its trailing extent-1 axes); for other ops the loop
// outside the target's innermost axis. A loop further in would recompute the reduction.
int row_position(const Operation& op, const Stage& target) {
  int rank = static_cast<int>(op.axes.size()), first_reduced = rank;
  if (op.reduction() && rank == target.num_spatial_roots())
    while (first_reduced > 0 && op.axes[first_reduced - 1].extent == 1) --first_reduced;
  return (first_reduced < rank ? first_reduced : target.num_spatial_roots() - 1) - 1;
}

// The split that the threads of `consumer`, bound by an earlier fuse_into_row_block, follow;
// -1 where there is none.
int row_block_split(const State& s, int consumer) {
  const std::string& name = s.stage(consumer).op->name;
  State replay(s.dag_ptr());
  for (const StepPtr& step : s.steps()) {
    auto* follow = dynamic_cast<const FollowSplitStep*>(step.get());
    if (follow && replay.stage(follow->stage).op->name == name) return follow->src_step;
    replay.apply(step);
  }
  return -1;
}

// GPU: a reduction across threads computed inside the block of its last consumer, an elementwise
// stage whose block (blockIdx.x) is one of the reduction's rows and whose threads walk a row as
// long as the reduction. The passes of a softmax or layer_norm then make one launch that reads
// its row while it is in cache, every thread holding the row's results in registers. The
// reductions fused into one consumer split their threads as the first of them did, so that all
// of the block's threads take part in each. Empty where the stage does not fit that pattern.
std::optional<State> fuse_into_row_block(const State& s, int stage) {
  std::vector<int> consumers = s.consumers(stage);
  if (consumers.empty() || s.is_kernel_output(stage)) return std::nullopt;
  const int consumer = *std::max_element(consumers.begin(), consumers.end());
  const Stage& c = s.stage(consumer);
  const Stage& st = s.stage(stage);
  if (c.location != ComputeLocation::Root || c.op->reduction() || c.leaves.empty()) return std::nullopt;
  const int rows = row_position(*st.op, c) + 1;  // the consumer's loops over the rows; the rest walk a row
  const int axes = c.num_spatial_roots();
  if (rows < 1 || rows >= axes) return std::nullopt;
  const int first_reduce = st.num_spatial_roots(), last = static_cast<int>(st.leaves.size()) - 1;
  int64_t reduce_extent = 1, row_extent = 1;
  for (int p = first_reduce; p <= last; ++p) reduce_extent *= st.leaf(p).extent;
  for (int a = rows; a < axes; ++a) row_extent *= c.op->axes[a].extent;
  if (row_extent != reduce_extent) return std::nullopt;
  const bool fresh = c.relations.empty();
  int split = -1;
  if (!fresh) {
    const bool bound_here = c.leaves.size() == 3 && c.leaf(0).annotation == IterAnnotation::BlockX &&
                            c.leaf(2).annotation == IterAnnotation::ThreadX;
    if (!bound_here || (split = row_block_split(s, consumer)) < 0) return std::nullopt;
  }
  State next = s;
  if (last > first_reduce) {
    std::vector<int> reduce_loops;
    for (int p = first_reduce; p <= last; ++p) reduce_loops.push_back(p);
    if (!next.try_apply(std::make_shared<FuseStep>(stage, reduce_loops))) return std::nullopt;
  }
  if (fresh) {
    next.apply(std::make_shared<SplitStep>(stage, first_reduce, std::vector<int64_t>{0}));
    split = static_cast<int>(next.steps().size()) - 1;
  } else if (!next.try_apply(std::make_shared<FollowSplitStep>(stage, first_reduce, split, 1))) {
    return std::nullopt;
  }
  next.apply(std::make_shared<RfactorStep>(stage, first_reduce + 1, next.stage(stage).num_spatial_roots()));
  // The factored stage comes in before the reduction: the reduction and its consumer move one up.
  const int reduction = stage + 1, target = consumer + 1;
  next.apply(std::make_shared<ComputeAtStep>(stage, reduction, next.stage(reduction).num_spatial_roots()));
  if (fresh) {
    // One loop over the rows, one along a row.
    std::vector<int> row_loops, along;
    for (int p = 0; p < axes; ++p) (p < rows ? row_loops : along).push_back(p);
    if (along.size() > 1 && !next.try_apply(std::make_shared<FuseStep>(target, along))) return std::nullopt;
    if (rows > 1 && !next.try_apply(std::make_shared<FuseStep>(target, row_loops))) return std::nullopt;
    if (!next.try_apply(std::make_shared<FollowSplitStep>(target, 1, split, 1)) ||
        !next.try_apply(std::make_shared<AnnotateStep>(target, 0, IterAnnotation::BlockX)) ||
        !next.try_apply(std::make_shared<AnnotateStep>(target, 2, IterAnnotation::ThreadX)))
      return std::nullopt;
  }
  if (!next.try_apply(std::make_shared<ComputeAtStep>(reduction, target, 0)) ||
      !next.try_apply(std::make_shared<AnnotateStep>(reduction, next.stage(reduction).num_spatial_roots(), IterAnnotation::ThreadX)))
    return std::nullopt;
  return next;
}

// CPU: a reduction with little spatial parallelism and a long reduction gets a variant that
// computes partial results in parallel (rfactor), factoring out the inner or the outer part.
// GPU: the partial results are computed by the threads of a block (cross-thread reduction), the
// inner part of the split running on the threads so that neighbouring threads read neighbouring
// elements. That is how a GPU reduces any sum longer than a warp, whatever the number of sums:
// one thread walking a row alone reads a cache line per step, strided across the warp.
class AddRfactor final : public SketchRule {
 public:
  std::string name() const override { return "rfactor"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    if (st.is_placeholder() || st.location != ComputeLocation::Root || !st.op->reduction() || ansor::needs_multi_level_tiling(*st.op))
      return Condition::Pass;
    if (!st.relations.empty()) return Condition::Pass;
    bool worth_it = ctx.gpu ? reduction_size(*st.op) > ctx.gpu_limits.warp_size : has_more_reduction_parallel(*st.op, ctx.parallelism);
    if (!worth_it) return Condition::Pass;
    return ctx.gpu ? Condition::ApplyAndSkipRest : Condition::Apply;
  }
  Successors apply(const SamplerContext& ctx, const State& s, int stage) const override {
    State base = s;
    const Stage& st = base.stage(stage);
    int first_reduce = st.num_spatial_roots(), last = static_cast<int>(st.leaves.size()) - 1;
    if (last > first_reduce) {
      std::vector<int> reduce_loops;
      for (int p = first_reduce; p <= last; ++p) reduce_loops.push_back(p);
      base.apply(std::make_shared<FuseStep>(stage, reduce_loops));
    }
    base.apply(std::make_shared<SplitStep>(stage, first_reduce, std::vector<int64_t>{0}));
    int spatial = base.stage(stage).num_spatial_roots();
    Successors out;
    for (int part : ctx.gpu ? std::vector<int>{1} : std::vector<int>{1, 0}) {
      State next = base;
      next.apply(std::make_shared<RfactorStep>(stage, first_reduce + part, spatial));
      if (ctx.gpu) {
        // Cross-thread reduction: the partial results of one output element are computed by the
        // threads of one block, each thread its own (the partial stage computed inside the
        // reduction loop over them, which annotation binds to threadIdx.x), then combined.
        next.apply(std::make_shared<ComputeAtStep>(stage, stage + 1, next.stage(stage + 1).num_spatial_roots()));
      }
      out.push_back({next, stage - 1});
    }
    if (ctx.gpu)
      if (std::optional<State> fused = fuse_into_row_block(s, stage)) out.push_back({*fused, stage - 1});
    return out;
  }
};

// The stage computed inside the row loop of its last consumer, so that a normalisation's
// passes (reductions over a row, then the elementwise pass) each read a row while it is in
// cache. Empty when the consumer's leading loops are transformed or another consumer is
// computed outside that loop.
std::optional<State> attach_to_row(const State& s, int stage) {
  std::vector<int> consumers = s.consumers(stage);
  if (consumers.empty() || s.is_kernel_output(stage)) return std::nullopt;
  int target = *std::max_element(consumers.begin(), consumers.end());
  const Stage& t = s.stage(target);
  int row = row_position(*s.stage(stage).op, t);
  if (row < 0 || t.location == ComputeLocation::Inlined || static_cast<int>(t.leaves.size()) <= row) return std::nullopt;
  for (int p = 0; p <= row; ++p)
    if (t.leaves[p] != p) return std::nullopt;
  State next = s;
  if (!next.try_apply(std::make_shared<ComputeAtStep>(stage, target, row))) return std::nullopt;
  return next;
}

// A stage that is no tiling candidate, computed at the root.
bool untiled_root_stage(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  return !st.is_placeholder() && st.location == ComputeLocation::Root && !ansor::needs_multi_level_tiling(*st.op);
}

// CPU: a stage feeding a row-wise consumer gets a variant computed per row of that consumer.
class AddRowFusion final : public SketchRule {
 public:
  std::string name() const override { return "row-fusion"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    return !ctx.gpu && untiled_root_stage(s, stage) && attach_to_row(s, stage) ? Condition::Apply : Condition::Pass;
  }
  Successors apply(const SamplerContext&, const State& s, int stage) const override { return {{*attach_to_row(s, stage), stage - 1}}; }
};

// Whether the innermost reduction axis of the op runs along the innermost dimension of a
// tensor it reads, so that its lanes load consecutive elements.
bool reduces_innermost_dimension(const Operation& op) {
  const ReduceNode* red = op.reduction();
  const VarNode* inner = red->axes.back().var.get();
  for (const LoadNode* l : collect_loads(red->source))
    if (!l->indices.empty() && l->indices.back()->as<VarNode>() == inner) return true;
  return false;
}

// The partial results a reduction along a row of `extent` elements keeps: several vectors of
// `lanes`, so that the additions (or max, ...) of consecutive vectors do not wait for one
// another. One vector would make a chain of extent / lanes dependent operations, each as long
// as the operation's latency (4 cycles for a vector add), where the loads could feed two per
// cycle. The row must hold at least two rounds of them.
int64_t partial_result_count(int64_t extent, int64_t lanes) {
  constexpr int64_t kMaxAccumulators = 8;
  int64_t vectors = extent / lanes, best = 1;
  for (int64_t a = 2; a <= kMaxAccumulators && 2 * a <= vectors; ++a)
    if (vectors % a == 0) best = a;
  return best * lanes;
}

// CPU: a reduction along the innermost dimension of its input, long enough, gets vector-wide
// partial results instead of a scalar accumulator: the innermost loop is split by a few vector
// lengths (partial_result_count) and its inner part factored out (rfactor) as the innermost
// loop of the partial stage, computed per output element so that the partial results stay in
// registers; the stage then reduces them across the lanes. The second variant also computes
// the stage per row of its consumer. With outputs enough for the threads, the scalar form and
// the parallel partial results (rfactor) are not kept: they are the slower ones.
class AddVectorRfactor final : public SketchRule {
 public:
  std::string name() const override { return "vector-rfactor"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    if (ctx.gpu || !untiled_root_stage(s, stage) || !s.stage(stage).op->reduction() || s.has_attached(stage)) return Condition::Pass;
    const Stage& st = s.stage(stage);
    const Iterator& inner = st.leaf(static_cast<int>(st.leaves.size()) - 1);
    int64_t lanes = vector_length(inner.extent, ctx.vector_lanes);
    bool applies = st.relations.empty() && inner.kind == IterKind::Reduce && lanes >= 4 && inner.extent > lanes &&
                   reduces_innermost_dimension(*st.op);
    if (!applies) return Condition::Pass;
    return spatial_size(*st.op) >= ctx.parallelism ? Condition::ApplyAndSkipRest : Condition::Apply;
  }
  Successors apply(const SamplerContext& ctx, const State& s, int stage) const override {
    State next = s;
    const Stage& st = next.stage(stage);
    int last = static_cast<int>(st.leaves.size()) - 1, spatial = st.num_spatial_roots();
    const int64_t extent = st.leaf(last).extent;
    const int64_t partials = partial_result_count(extent, vector_length(extent, ctx.vector_lanes));
    next.apply(std::make_shared<SplitStep>(stage, last, std::vector<int64_t>{partials}));
    next.apply(std::make_shared<RfactorStep>(stage, last + 1, spatial));
    // The partial stage's loops: the spatial axes, the lanes, the reduction; the lanes go last.
    int loops = static_cast<int>(next.stage(stage).leaves.size());
    std::vector<int> order;
    for (int p = 0; p < loops; ++p)
      if (p != spatial) order.push_back(p);
    order.push_back(spatial);
    next.apply(std::make_shared<ReorderStep>(stage, order));
    int outer = next.stage(stage + 1).num_spatial_roots() - 1;
    if (outer >= 0) next.apply(std::make_shared<ComputeAtStep>(stage, stage + 1, outer));
    Successors out = {{next, stage - 1}};
    if (std::optional<State> row = attach_to_row(next, stage + 1)) out.push_back({*row, stage - 1});
    return out;
  }
};

// Whether a GPU stage is tiled for the tensor cores (tensorize_choices): its warps keep their
// sums in registers and read their fragments from shared memory, never from device memory, so
// that neither variant without is derived (in device memory a ragged edge's guard would also
// vary across the lanes of a warp, which the instruction cannot have).
bool tiled_for_tensor_cores(const SamplerContext& ctx, const State& s, int stage) {
  return ctx.gpu && !tensorize_choices(ctx, s, stage).empty();
}

// A stage to tile with no consumer to fuse gets a variant that accumulates in a local cache
// stage; the stage itself then copies the tile out and is fused into the tile.
class AddCacheWrite final : public SketchRule {
 public:
  std::string name() const override { return "cache-write"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    if (!needs_multi_level_tiling(s, stage) || fusible_consumer(s, stage) >= 0 || s.has_attached(stage)) return Condition::Pass;
    return tiled_for_tensor_cores(ctx, s, stage) ? Condition::ApplyAndSkipRest : Condition::Apply;
  }
  Successors apply(const SamplerContext&, const State& s, int stage) const override {
    State next = s;
    next.apply(std::make_shared<CacheWriteStep>(stage, MemoryScope::Local));
    return {{next, stage}};
  }
};

// GPU: the inputs of a stage to tile are read through shared memory.
class AddSharedCacheRead final : public SketchRule {
 public:
  std::string name() const override { return "shared-cache-read"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    if (!ctx.gpu || !needs_multi_level_tiling(s, stage)) return Condition::Pass;
    for (const std::string& t : read_tensors(*s.stage(stage).op)) {
      int p = s.find_stage(t);
      if (p >= 0 && s.stage(p).scope == MemoryScope::Shared) return Condition::Pass;
    }
    return tiled_for_tensor_cores(ctx, s, stage) ? Condition::ApplyAndSkipRest : Condition::Apply;
  }
  Successors apply(const SamplerContext&, const State& s, int stage) const override {
    State next = s;
    int target = stage;
    for (const std::string& t : read_tensors(*s.stage(stage).op)) {
      int p = next.find_stage(t);
      if (p < 0 || next.stage(p).location == ComputeLocation::Inlined) continue;
      next.apply(std::make_shared<CacheReadStep>(p, MemoryScope::Shared, std::vector<int>{target}));
      ++target;  // the cache stage was inserted before it
    }
    return {{next, target}};
  }
};

// The tilings of a stage to tile: by each tensor intrinsic of the target that computes it
// (tensorize_choices), else multi-level tiling.
std::vector<std::pair<State, SpatialSplits>> tile_stage(const SamplerContext& ctx, const State& s, int stage) {
  std::vector<std::pair<State, SpatialSplits>> out;
  for (const TensorizeChoice& choice : tensorize_choices(ctx, s, stage)) {
    SpatialSplits splits;
    State tiled = tensorized_tiling(s, stage, choice, splits);
    out.emplace_back(std::move(tiled), std::move(splits));
  }
  if (out.empty()) {
    SpatialSplits splits;
    State tiled = multi_level_tiling(s, stage, tiling_structure(ctx), splits);
    out.emplace_back(std::move(tiled), std::move(splits));
  }
  return out;
}

class MultiLevelTilingWithFusion final : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling-with-fusion"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    return needs_multi_level_tiling(s, stage) && fusible_consumer(s, stage) >= 0 ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  Successors apply(const SamplerContext& ctx, const State& s, int stage) const override {
    int consumer = fusible_consumer(s, stage);
    Successors out;
    for (const auto& [tiled, splits] : tile_stage(ctx, s, stage)) {
      const State with_reads = attach_shared_reads(ctx, tiled, stage);
      for (int level : ctx.gpu ? std::vector<int>{3} : std::vector<int>{1, 2})
        out.push_back({fuse_into_consumer(with_reads, stage, consumer, splits, level), stage - 1});
    }
    return out;
  }
};

class MultiLevelTiling final : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    return needs_multi_level_tiling(s, stage) ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  Successors apply(const SamplerContext& ctx, const State& s, int stage) const override {
    Successors out;
    for (const auto& [tiled, splits] : tile_stage(ctx, s, stage)) out.push_back({attach_shared_reads(ctx, tiled, stage), stage - 1});
    return out;
  }
};

class SkipStage final : public SketchRule {
 public:
  std::string name() const override { return "skip"; }
  Condition check(const SamplerContext&, const State&, int) const override { return Condition::Apply; }
  Successors apply(const SamplerContext&, const State& s, int stage) const override { return {{s, stage - 1}}; }
};

}  // namespace

SketchRules SketchRules::cpu() {
  SketchRules r;
  for (SketchRulePtr rule : std::vector<SketchRulePtr>{std::make_shared<AlwaysInline>(), std::make_shared<AddVectorRfactor>(),
                                                        std::make_shared<AddRfactor>(), std::make_shared<AddRowFusion>(),
                                                        std::make_shared<AddCacheWrite>(), std::make_shared<MultiLevelTilingWithFusion>(),
                                                        std::make_shared<MultiLevelTiling>(), std::make_shared<SkipStage>()})
    r.add(rule);
  return r;
}

SketchRules SketchRules::gpu() {
  SketchRules r;
  for (SketchRulePtr rule : std::vector<SketchRulePtr>{
           std::make_shared<AlwaysInline>(), std::make_shared<AddRfactor>(), std::make_shared<AddCacheWrite>(),
           std::make_shared<AddSharedCacheRead>(), std::make_shared<MultiLevelTilingWithFusion>(), std::make_shared<MultiLevelTiling>(),
           std::make_shared<SkipStage>()})
    r.add(rule);
  return r;
}

void SketchRules::add(SketchRulePtr rule, size_t position) {
  position = std::min(position, rules_.size());
  rules_.insert(rules_.begin() + static_cast<long>(position), std::move(rule));
}

}  // namespace ansor
