// The derivation rules for CPUs and GPUs.
#include <fmt/format.h>

#include <algorithm>

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

class AlwaysInline final : public SketchRule {
 public:
  std::string name() const override { return "always-inline"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    bool inline_it = !st.is_placeholder() && st.location == ComputeLocation::Root && is_strictly_inlinable(*st.op) &&
                     !s.is_kernel_output(stage) && !s.readers(stage).empty() && !s.has_attached(stage);
    return inline_it ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  Successors apply(const SamplerContext&, const State& s, int stage) const override {
    State next = s;
    next.apply(std::make_shared<ComputeInlineStep>(stage));
    return {{next, stage - 1}};
  }
};

// CPU: a reduction with little spatial parallelism and a long reduction gets a variant that
// computes partial results in parallel (rfactor), factoring out the inner or the outer part.
// GPU: the partial results are computed by the threads of a block (cross-thread reduction).
class AddRfactor final : public SketchRule {
 public:
  std::string name() const override { return "rfactor"; }
  Condition check(const SamplerContext& ctx, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    if (st.is_placeholder() || st.location != ComputeLocation::Root || !st.op->reduction() || ansor::needs_multi_level_tiling(*st.op))
      return Condition::Pass;
    if (!st.relations.empty() || !has_more_reduction_parallel(*st.op, ctx.parallelism)) return Condition::Pass;
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
      int spatial_loops = next.stage(stage + 1).num_spatial_roots();
      if (ctx.gpu && spatial_loops > 0) {
        // The partial results of one output element are computed by the threads of one block.
        next.apply(std::make_shared<ComputeAtStep>(stage, stage + 1, spatial_loops - 1));
      }
      out.push_back({next, stage - 1});
    }
    return out;
  }
};

// A stage to tile with no consumer to fuse gets a variant that accumulates in a local cache
// stage; the stage itself then copies the tile out and is fused into the tile.
class AddCacheWrite final : public SketchRule {
 public:
  std::string name() const override { return "cache-write"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    return needs_multi_level_tiling(s, stage) && fusible_consumer(s, stage) < 0 && !s.has_attached(stage) ? Condition::Apply
                                                                                                          : Condition::Pass;
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
    return Condition::Apply;
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

class MultiLevelTilingWithFusion final : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling-with-fusion"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    return needs_multi_level_tiling(s, stage) && fusible_consumer(s, stage) >= 0 ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  Successors apply(const SamplerContext& ctx, const State& s, int stage) const override {
    int consumer = fusible_consumer(s, stage);
    std::vector<int> splits;
    State tiled = attach_shared_reads(ctx, multi_level_tiling(s, stage, tiling_structure(ctx), splits), stage);
    Successors out;
    for (int level : ctx.gpu ? std::vector<int>{3} : std::vector<int>{1, 2})
      out.push_back({fuse_into_consumer(tiled, stage, consumer, splits, level), stage - 1});
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
    std::vector<int> splits;
    return {{attach_shared_reads(ctx, multi_level_tiling(s, stage, tiling_structure(ctx), splits), stage), stage - 1}};
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
  for (SketchRulePtr rule : std::vector<SketchRulePtr>{std::make_shared<AlwaysInline>(), std::make_shared<AddRfactor>(),
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
