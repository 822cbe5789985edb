// Loop renumbering over any step, through the loops each kind names (Step::loops) and rebuilds
// (Step::with_loops).
#include "schedule/step.h"

namespace ansor {

StepPtr remap_loops(const StepPtr& step, int stage, const std::function<int(int)>& map) {
  std::vector<LoopRef> loops = step->loops();
  bool names = false, changed = false;
  for (LoopRef& loop : loops) {
    if (loop.stage != stage) continue;
    names = true;
    int renumbered = map(loop.iter);
    if (renumbered < 0) return nullptr;
    changed = changed || renumbered != loop.iter;
    loop.iter = renumbered;
  }
  if (!names) return step;
  StepPtr out = step->with_loops(loops);
  return out && !changed ? step : out;
}

}  // namespace ansor
