// Steps on the loops of one stage: split, follow_split, follow_fused_split, reorder, fuse.
#include <fmt/format.h>

#include <algorithm>

#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

using namespace step_util;

void SplitStep::apply_to(State& state) const { split_loop(state, stage, iter, lengths, "split"); }

nlohmann::json SplitStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j["lengths"] = lengths;
  return j;
}

std::string SplitStep::describe(const State& s) const {
  std::vector<std::string> ls;
  for (int64_t l : lengths) ls.push_back(l ? std::to_string(l) : "?");
  return fmt::format("split({}, {}, [{}])", stage_name(s, stage), loop_name(s, stage, iter), fmt::join(ls, ", "));
}

StepPtr SplitStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iter", "lengths"});
  return std::make_shared<SplitStep>(stage_field(j), iter_field(j), int_list_field(j, "lengths", 0, kMaxLength, kMaxList));
}

std::vector<LoopRef> SplitStep::loops() const { return {{stage, iter}}; }

StepPtr SplitStep::with_loops(const std::vector<LoopRef>& loops) const { return std::make_shared<SplitStep>(stage, loops.at(0).iter, lengths); }

std::vector<int64_t> FollowSplitStep::lengths(const State& state) const {
  if (src_step < 0 || src_step >= static_cast<int>(state.steps().size()))
    throw StepError(fmt::format("follow_split: there is no step {}", src_step));
  auto* src = dynamic_cast<const SplitStep*>(state.steps()[src_step].get());
  if (!src) throw StepError(fmt::format("follow_split: step {} is not a split", src_step));
  if (n_split < 1 || n_split > static_cast<int>(src->lengths.size()))
    throw StepError(fmt::format("follow_split: n_split {} must be in [1, {}]", n_split, src->lengths.size()));
  std::vector<int64_t> out(src->lengths.begin(), src->lengths.begin() + n_split - 1);
  int64_t rest = 1;
  for (size_t i = n_split - 1; i < src->lengths.size(); ++i) rest = src->lengths[i] == 0 || rest == 0 ? 0 : rest * src->lengths[i];
  out.push_back(rest);
  return out;
}

void FollowSplitStep::apply_to(State& state) const { split_loop(state, stage, iter, lengths(state), "follow_split"); }

nlohmann::json FollowSplitStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j["src_step"] = src_step;
  j["n_split"] = n_split;
  return j;
}

std::string FollowSplitStep::describe(const State& s) const {
  return fmt::format("follow_split({}, {}, step {}, {})", stage_name(s, stage), loop_name(s, stage, iter), src_step, n_split);
}

StepPtr FollowSplitStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iter", "src_step", "n_split"});
  return std::make_shared<FollowSplitStep>(stage_field(j), iter_field(j), int_field(j, "src_step", 0, kMaxIndex), int_field(j, "n_split", 1, kMaxList));
}

std::vector<LoopRef> FollowSplitStep::loops() const { return {{stage, iter}}; }

StepPtr FollowSplitStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<FollowSplitStep>(stage, loops.at(0).iter, src_step, n_split);
}

int64_t FollowFusedSplitStep::length(const State& state) const {
  if (src_steps.empty()) throw StepError("follow_fused_split: no source steps");
  int64_t product = 1;
  for (int id : src_steps) {
    if (id < 0 || id >= static_cast<int>(state.steps().size()))
      throw StepError(fmt::format("follow_fused_split: there is no step {}", id));
    auto* src = dynamic_cast<const SplitStep*>(state.steps()[id].get());
    if (!src) throw StepError(fmt::format("follow_fused_split: step {} is not a split", id));
    if (level < 0 || level >= static_cast<int>(src->lengths.size()))
      throw StepError(fmt::format("follow_fused_split: step {} has no length {}", id, level));
    int64_t l = src->lengths[level];
    product = l == 0 || product == 0 ? 0 : product * l;
    if (product > kMaxLength) throw StepError("follow_fused_split: the length is too large");
  }
  return product;
}

void FollowFusedSplitStep::apply_to(State& state) const { split_loop(state, stage, iter, {length(state)}, "follow_fused_split"); }

nlohmann::json FollowFusedSplitStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j["src_steps"] = src_steps;
  j["level"] = level;
  return j;
}

std::string FollowFusedSplitStep::describe(const State& s) const {
  return fmt::format("follow_fused_split({}, {}, steps [{}], level {})", stage_name(s, stage), loop_name(s, stage, iter),
                     fmt::join(src_steps, ", "), level);
}

StepPtr FollowFusedSplitStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iter", "src_steps", "level"});
  return std::make_shared<FollowFusedSplitStep>(stage_field(j), iter_field(j), index_list_field(j, "src_steps"), int_field(j, "level", 0, kMaxList));
}

std::vector<LoopRef> FollowFusedSplitStep::loops() const { return {{stage, iter}}; }

StepPtr FollowFusedSplitStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<FollowFusedSplitStep>(stage, loops.at(0).iter, src_steps, level);
}

void ReorderStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "reorder");
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == st.leaves.size();
  for (size_t i = 0; permutation && i < sorted.size(); ++i) permutation = sorted[i] == static_cast<int>(i);
  if (!permutation)
    throw StepError(fmt::format("reorder: [{}] is not a permutation of the {} loops of '{}'", fmt::join(order, ", "), st.leaves.size(),
                                st.op->name));
  std::vector<int> leaves;
  for (int i : order) leaves.push_back(st.leaves[i]);
  st.leaves = leaves;
}

nlohmann::json ReorderStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["order"] = order;
  return j;
}

std::string ReorderStep::describe(const State& s) const {
  std::vector<std::string> names;
  for (int i : order) names.push_back(loop_name(s, stage, i));
  return fmt::format("reorder({}, [{}])", stage_name(s, stage), fmt::join(names, ", "));
}

StepPtr ReorderStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "order"});
  return std::make_shared<ReorderStep>(stage_field(j), index_list_field(j, "order"));
}

// Every loop of the stage; with_loops stays the base's nullptr, since a reorder of renumbered
// loops would be another permutation, not this one.
std::vector<LoopRef> ReorderStep::loops() const {
  std::vector<LoopRef> refs;
  for (int p : order) refs.push_back({stage, p});
  return refs;
}

void FuseStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "fuse");
  if (iters.empty()) throw StepError("fuse: no loops");
  for (size_t i = 0; i < iters.size(); ++i) {
    leaf_node(st, iters[i], "fuse");
    if (i > 0 && iters[i] != iters[i - 1] + 1) throw StepError(fmt::format("fuse: loops [{}] are not consecutive", fmt::join(iters, ", ")));
  }
  if (iters.size() == 1) return;
  std::vector<int> nodes;
  std::string name;
  int64_t extent = 1;
  bool spatial = false, reduce = false;
  for (int i : iters) {
    int node = st.leaves[i];
    const Iterator& it = st.iters[node];
    if (it.annotation != IterAnnotation::None)
      throw StepError(fmt::format("fuse: loop '{}' is annotated {}", it.name, annotation_name(it.annotation)));
    nodes.push_back(node);
    name += it.name + "@";
    extent = extent < 0 || it.extent < 0 ? -1 : extent * it.extent;
    spatial = spatial || it.kind == IterKind::Spatial || it.kind == IterKind::Mixed;
    reduce = reduce || it.kind == IterKind::Reduce || it.kind == IterKind::Mixed;
  }
  if (extent > kMaxLength) throw StepError("fuse: the fused loop is too long");
  name.pop_back();
  int fused = static_cast<int>(st.iters.size());
  IterKind kind = spatial && reduce ? IterKind::Mixed : (reduce ? IterKind::Reduce : IterKind::Spatial);
  st.iters.push_back({name, extent, kind, IterAnnotation::None});
  st.relations.push_back({IterRelation::Kind::Fuse, nodes, {fused}, {}});
  st.leaves.erase(st.leaves.begin() + iters.front(), st.leaves.begin() + iters.back() + 1);
  st.leaves.insert(st.leaves.begin() + iters.front(), fused);
  move_attachments(state, stage, nodes, fused);
}

nlohmann::json FuseStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iters"] = iters;
  return j;
}

std::string FuseStep::describe(const State& s) const {
  std::vector<std::string> names;
  for (int i : iters) names.push_back(loop_name(s, stage, i));
  return fmt::format("fuse({}, [{}])", stage_name(s, stage), fmt::join(names, ", "));
}

StepPtr FuseStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iters"});
  return std::make_shared<FuseStep>(stage_field(j), index_list_field(j, "iters"));
}

std::vector<LoopRef> FuseStep::loops() const {
  std::vector<LoopRef> refs;
  for (int p : iters) refs.push_back({stage, p});
  return refs;
}

StepPtr FuseStep::with_loops(const std::vector<LoopRef>& loops) const {
  std::vector<int> positions;
  for (const LoopRef& l : loops) positions.push_back(l.iter);
  return std::make_shared<FuseStep>(stage, positions);
}

}  // namespace ansor
