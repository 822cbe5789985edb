// Node-based crossover: steps grouped by node, each node's taken from one parent, merged in the
// annotator's order and rebuilt, with one repair per node.
#include "sampler/crossover.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "sampler/program_builder.h"
#include "schedule/steps.h"

namespace ansor {

std::vector<int> step_nodes(const State& program) {
  std::vector<int> node_of(program.dag().ops().size());
  std::iota(node_of.begin(), node_of.end(), 0);
  std::vector<int> nodes;
  for (const StepPtr& step : program.steps()) {
    if (std::optional<InsertedStage> inserted = step->inserted_stage()) {
      int node = node_of.at(inserted->owner);
      nodes.push_back(node);
      node_of.insert(node_of.begin() + inserted->position, node);
    } else {
      nodes.push_back(node_of.at(step->stage));
    }
  }
  return nodes;
}

namespace {

bool same_step(const StepPtr& x, const StepPtr& y) { return x == y || (x->kind() == y->kind() && x->to_json() == y->to_json()); }

// One parent's steps with their nodes.
struct Parent {
  const std::vector<StepPtr>& steps;
  std::vector<int> nodes;
};

// The nodes whose steps differ between the parents (sketch steps and annotation steps alike).
std::vector<int> differing_nodes(const Parent& a, const Parent& b, size_t prefix, int num_nodes) {
  std::vector<bool> differs(num_nodes, false);
  for (size_t k = 0; k < prefix; ++k)
    if (!same_step(a.steps[k], b.steps[k])) differs[a.nodes[k]] = true;
  std::vector<std::vector<StepPtr>> own_a(num_nodes), own_b(num_nodes);
  for (size_t k = prefix; k < a.steps.size(); ++k) own_a[a.nodes[k]].push_back(a.steps[k]);
  for (size_t k = prefix; k < b.steps.size(); ++k) own_b[b.nodes[k]].push_back(b.steps[k]);
  std::vector<int> out;
  for (int n = 0; n < num_nodes; ++n) {
    bool d = differs[n] || own_a[n].size() != own_b[n].size();
    for (size_t i = 0; !d && i < own_a[n].size(); ++i) d = !same_step(own_a[n][i], own_b[n][i]);
    if (d) out.push_back(n);
  }
  return out;
}

// The child's steps, with the node of each: sketch steps in place, then annotation steps in
// the annotator's order (locations; then by stage, last first; then by position).
std::vector<std::pair<StepPtr, int>> assemble(const Parent& a, const Parent& b, size_t prefix, const std::vector<int>& parent_of) {
  std::vector<std::pair<StepPtr, int>> child;
  for (size_t k = 0; k < prefix; ++k) child.push_back({(parent_of[a.nodes[k]] == 0 ? a : b).steps[k], a.nodes[k]});
  std::vector<std::tuple<int, int, size_t, int>> order;  // (phase, -stage, position, parent)
  for (int p = 0; p < 2; ++p) {
    const Parent& x = p == 0 ? a : b;
    for (size_t k = prefix; k < x.steps.size(); ++k)
      if (parent_of[x.nodes[k]] == p) order.emplace_back(x.steps[k]->places_stage() ? 0 : 1, -x.steps[k]->stage, k, p);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [phase, stage, k, p] : order) {
    const Parent& x = p == 0 ? a : b;
    child.push_back({x.steps[k], x.nodes[k]});
  }
  return child;
}

}  // namespace

std::optional<State> Crossover::cross(const State& a, const State& b, std::mt19937_64& rng) const {
  SketchMatch match_a = catalog_->match(a), match_b = catalog_->match(b);
  if (!match_a.found() || match_a.sketch != match_b.sketch) return std::nullopt;
  const size_t prefix = match_a.prefix;
  const int num_nodes = static_cast<int>(a.dag().ops().size());
  Parent pa{a.steps(), step_nodes(a)}, pb{b.steps(), step_nodes(b)};
  std::vector<int> differing = differing_nodes(pa, pb, prefix, num_nodes);
  if (differing.size() < 2) return std::nullopt;
  std::vector<int> parent_of(num_nodes, 0);
  for (int n : differing) parent_of[n] = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
  auto from_both = [&] {
    int from_b = 0;
    for (int n : differing) from_b += parent_of[n];
    return from_b > 0 && from_b < static_cast<int>(differing.size());
  };
  if (!from_both()) {
    int n = differing[std::uniform_int_distribution<size_t>(0, differing.size() - 1)(rng)];
    parent_of[n] ^= 1;
  }
  std::vector<bool> repaired(num_nodes, false);
  for (;;) {
    std::vector<std::pair<StepPtr, int>> child = assemble(pa, pb, prefix, parent_of);
    ProgramBuilder builder(a.dag_ptr(), ctx_);
    int failed = -1;
    for (const auto& [step, node] : child) {
      if (!builder.apply(step)) {
        failed = node;
        break;
      }
    }
    if (failed < 0) {
      // Steps that differ can still build the same loops (compute_at two loops that a later
      // fuse merges): such a child repeats a parent.
      std::optional<State> built = builder.finish();
      if (built && (built->signature() == a.signature() || built->signature() == b.signature())) return std::nullopt;
      return built;
    }
    if (repaired[failed] || std::find(differing.begin(), differing.end(), failed) == differing.end()) return std::nullopt;
    repaired[failed] = true;
    parent_of[failed] ^= 1;
    if (!from_both()) return std::nullopt;
  }
}

}  // namespace ansor
