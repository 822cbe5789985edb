// The worklist of (state, stage) pairs that derivation rules expand.
#include "sampler/sketch_generator.h"

#include <fmt/format.h>

#include <set>

namespace ansor {

std::vector<Sketch> generate_sketches(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, const SketchRules& rules,
                                      size_t max_sketches) {
  struct Pending {
    State state;
    int stage;
    std::vector<std::string> derivation;
  };
  std::vector<Pending> work;
  State initial(dag);
  work.push_back({initial, initial.num_stages() - 1, {}});
  std::vector<Sketch> sketches;
  std::set<std::string> seen;
  while (!work.empty() && sketches.size() < max_sketches) {
    Pending p = std::move(work.back());
    work.pop_back();
    if (p.stage < 0) {
      if (seen.insert(p.state.signature()).second) sketches.push_back({std::move(p.state), std::move(p.derivation)});
      continue;
    }
    if (p.state.stage(p.stage).is_placeholder()) {
      work.push_back({std::move(p.state), p.stage - 1, std::move(p.derivation)});
      continue;
    }
    // Successors go on a stack; pushing them in reverse keeps the rules' order in the output.
    std::vector<Pending> successors;
    for (const SketchRulePtr& rule : rules.rules()) {
      SketchRule::Condition c = rule->check(ctx, p.state, p.stage);
      if (c == SketchRule::Condition::Pass) continue;
      std::string step = fmt::format("{}@{}", rule->name(), p.state.stage(p.stage).op->name);
      for (auto& [state, next] : rule->apply(ctx, p.state, p.stage)) {
        std::vector<std::string> derivation = p.derivation;
        derivation.push_back(step);
        successors.push_back({std::move(state), next, std::move(derivation)});
      }
      if (c == SketchRule::Condition::ApplyAndSkipRest) break;
    }
    for (auto it = successors.rbegin(); it != successors.rend(); ++it) work.push_back(std::move(*it));
  }
  return sketches;
}

}  // namespace ansor
