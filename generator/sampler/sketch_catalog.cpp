// Matching programs to the sketches they were annotated from.
#include "sampler/sketch_catalog.h"

#include <algorithm>

#include "sampler/sketch_rule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

const SplitStep* open_split(const StepPtr& step) {
  auto* split = dynamic_cast<const SplitStep*>(step.get());
  return split && std::find(split->lengths.begin(), split->lengths.end(), 0) != split->lengths.end() ? split : nullptr;
}

}  // namespace

SketchCatalog::SketchCatalog(std::vector<Sketch> sketches) : sketches_(std::move(sketches)) {
  for (const Sketch& sketch : sketches_) {
    Info info;
    const std::vector<StepPtr>& steps = sketch.state.steps();
    State replaying(sketch.state.dag_ptr());
    for (size_t k = 0; k < steps.size(); ++k) {
      info.step_json.push_back(steps[k]->to_json());
      if (const SplitStep* split = open_split(steps[k])) {
        info.open_splits.push_back(static_cast<int>(k));
        info.open_split_extents.push_back(std::max<int64_t>(0, replaying.stage(split->stage).leaf(split->iter).extent));
        info.open_split_vector_axes.push_back(splits_vector_axis(replaying, *split));
      }
      replaying.apply(steps[k]);
    }
    const State& s = sketch.state;
    for (int i = 0; i < s.num_stages(); ++i) {
      const Stage& st = s.stage(i);
      if (!st.is_placeholder() && st.location == ComputeLocation::Root && st.relations.empty() && !s.is_kernel_output(i))
        info.flexible_stages.push_back(i);
    }
    info_.push_back(std::move(info));
  }
}

bool SketchCatalog::step_matches(int sketch, size_t index, const StepPtr& step) const {
  const StepPtr& own = sketches_[sketch].state.steps()[index];
  if (own == step) return true;  // programs annotated in this process share the sketch's steps
  if (own->kind() != step->kind()) return false;
  if (const SplitStep* hole = open_split(own)) {
    auto& split = static_cast<const SplitStep&>(*step);
    if (split.stage != hole->stage || split.iter != hole->iter || split.lengths.size() != hole->lengths.size()) return false;
    for (size_t i = 0; i < split.lengths.size(); ++i)
      if (hole->lengths[i] != 0 && hole->lengths[i] != split.lengths[i]) return false;
    return true;
  }
  return info_[sketch].step_json[index] == step->to_json();
}

SketchMatch SketchCatalog::match(const State& program) const {
  SketchMatch best;
  const std::vector<StepPtr>& steps = program.steps();
  for (size_t s = 0; s < sketches_.size(); ++s) {
    size_t n = sketches_[s].state.steps().size();
    if (n > steps.size() || (best.found() && n <= best.prefix)) continue;
    size_t k = 0;
    while (k < n && step_matches(static_cast<int>(s), k, steps[k])) ++k;
    if (k == n) best = {static_cast<int>(s), n};
  }
  return best;
}

}  // namespace ansor
