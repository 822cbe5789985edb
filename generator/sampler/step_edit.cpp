// Field access and loop renumbering over the step classes.
#include "sampler/step_edit.h"

#include <memory>
#include <vector>

#include "schedule/steps.h"

namespace ansor {

int step_stage(const Step& step) {
  switch (step.kind()) {
    case StepKind::Split: return static_cast<const SplitStep&>(step).stage;
    case StepKind::FollowSplit: return static_cast<const FollowSplitStep&>(step).stage;
    case StepKind::FollowFusedSplit: return static_cast<const FollowFusedSplitStep&>(step).stage;
    case StepKind::Reorder: return static_cast<const ReorderStep&>(step).stage;
    case StepKind::Fuse: return static_cast<const FuseStep&>(step).stage;
    case StepKind::Annotate: return static_cast<const AnnotateStep&>(step).stage;
    case StepKind::Pragma: return static_cast<const PragmaStep&>(step).stage;
    case StepKind::StorageAlign: return static_cast<const StorageAlignStep&>(step).stage;
    case StepKind::ComputeAt: return static_cast<const ComputeAtStep&>(step).stage;
    case StepKind::ComputeInline: return static_cast<const ComputeInlineStep&>(step).stage;
    case StepKind::ComputeRoot: return static_cast<const ComputeRootStep&>(step).stage;
    case StepKind::CacheRead: return static_cast<const CacheReadStep&>(step).stage;
    case StepKind::CacheWrite: return static_cast<const CacheWriteStep&>(step).stage;
    case StepKind::Rfactor: return static_cast<const RfactorStep&>(step).stage;
    case StepKind::LayoutRewrite: return static_cast<const LayoutRewriteStep&>(step).stage;
  }
  return -1;
}

bool is_location_step(const Step& step) {
  StepKind k = step.kind();
  return k == StepKind::ComputeAt || k == StepKind::ComputeInline || k == StepKind::ComputeRoot;
}

StepPtr remap_loops(const StepPtr& step, int stage, const std::function<int(int)>& map) {
  bool gone = false, changed = false;
  auto loop = [&](int p) {
    int q = map(p);
    gone = gone || q < 0;
    changed = changed || q != p;
    return q;
  };
  StepPtr out = step;
  switch (step->kind()) {
    case StepKind::Split: {
      auto& s = static_cast<const SplitStep&>(*step);
      if (s.stage == stage) out = std::make_shared<SplitStep>(s.stage, loop(s.iter), s.lengths);
      break;
    }
    case StepKind::FollowSplit: {
      auto& s = static_cast<const FollowSplitStep&>(*step);
      if (s.stage == stage) out = std::make_shared<FollowSplitStep>(s.stage, loop(s.iter), s.src_step, s.n_split);
      break;
    }
    case StepKind::FollowFusedSplit: {
      auto& s = static_cast<const FollowFusedSplitStep&>(*step);
      if (s.stage == stage) out = std::make_shared<FollowFusedSplitStep>(s.stage, loop(s.iter), s.src_steps, s.level);
      break;
    }
    case StepKind::Reorder:
      if (static_cast<const ReorderStep&>(*step).stage == stage) return nullptr;
      break;
    case StepKind::Fuse: {
      auto& s = static_cast<const FuseStep&>(*step);
      if (s.stage != stage) break;
      std::vector<int> iters;
      for (int p : s.iters) iters.push_back(loop(p));
      out = std::make_shared<FuseStep>(s.stage, iters);
      break;
    }
    case StepKind::Annotate: {
      auto& s = static_cast<const AnnotateStep&>(*step);
      if (s.stage == stage) out = std::make_shared<AnnotateStep>(s.stage, loop(s.iter), s.annotation);
      break;
    }
    case StepKind::Pragma: {
      auto& s = static_cast<const PragmaStep&>(*step);
      if (s.stage == stage) out = std::make_shared<PragmaStep>(s.stage, loop(s.iter), s.pragma, s.value);
      break;
    }
    case StepKind::ComputeAt: {
      auto& s = static_cast<const ComputeAtStep&>(*step);
      if (s.target_stage == stage) out = std::make_shared<ComputeAtStep>(s.stage, s.target_stage, loop(s.target_iter));
      break;
    }
    case StepKind::Rfactor: {
      auto& s = static_cast<const RfactorStep&>(*step);
      if (s.stage == stage) out = std::make_shared<RfactorStep>(s.stage, loop(s.iter), s.factor_axis);
      break;
    }
    case StepKind::StorageAlign:
    case StepKind::ComputeInline:
    case StepKind::ComputeRoot:
    case StepKind::CacheRead:
    case StepKind::CacheWrite:
    case StepKind::LayoutRewrite: break;
  }
  if (gone) return nullptr;
  return changed ? out : step;
}

}  // namespace ansor
