// Steps that move a stage: compute_at, compute_inline, compute_root.
#include <fmt/format.h>

#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

using namespace step_util;

namespace {

Stage& movable_stage(State& state, int stage, const char* what) {
  const Stage& s = state.checked_stage(stage, what);
  if (s.is_placeholder()) throw StepError(fmt::format("{}: '{}' is an input", what, s.op->name));
  return state.mutable_stage(stage);
}

}  // namespace

void ComputeAtStep::apply_to(State& state) const {
  movable_stage(state, stage, "compute_at");
  const Stage& target = loop_stage(state, target_stage, "compute_at");
  int node = leaf_node(target, target_iter, "compute_at");
  const std::string& name = state.stage(stage).op->name;
  if (state.is_kernel_output(stage)) throw StepError(fmt::format("compute_at: '{}' is an output of the kernel", name));
  if (target_stage <= stage) throw StepError(fmt::format("compute_at: '{}' does not consume '{}'", target.op->name, name));
  if (stage_position_inside(state, target_stage, stage) >= 0)
    throw StepError(fmt::format("compute_at: '{}' is computed inside '{}'", target.op->name, name));
  // A tensorized loop's body is the intrinsic's nest and nothing else.
  for (int p = 0; p <= target_iter; ++p)
    if (target.leaf(p).annotation == IterAnnotation::Tensorize)
      throw StepError(fmt::format("compute_at: loop '{}' of '{}' is tensorized or inside a tensorized loop", target.iters[node].name,
                                  target.op->name));
  std::vector<int> consumers = state.consumers(stage);
  if (std::find(consumers.begin(), consumers.end(), target_stage) == consumers.end())
    throw StepError(fmt::format("compute_at: '{}' does not consume '{}'", target.op->name, name));
  for (int c : consumers) {
    if (c == target_stage) continue;
    if (stage_position_inside(state, c, target_stage) < target_iter)
      throw StepError(fmt::format("compute_at: '{}' also uses '{}' outside loop '{}' of '{}'", state.stage(c).op->name, name,
                                  target.iters[node].name, target.op->name));
  }
  Stage& st = state.mutable_stage(stage);
  st.location = ComputeLocation::At;
  st.attach_stage = target_stage;
  st.attach_iter = node;
  invalidate_extents(st);
}

nlohmann::json ComputeAtStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["target_stage"] = target_stage;
  j["target_iter"] = target_iter;
  return j;
}

std::string ComputeAtStep::describe(const State& s) const {
  return fmt::format("compute_at({}, {}, {})", stage_name(s, stage), stage_name(s, target_stage), loop_name(s, target_stage, target_iter));
}

StepPtr ComputeAtStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "target_stage", "target_iter"});
  return std::make_shared<ComputeAtStep>(stage_field(j), int_field(j, "target_stage", 0, kMaxIndex), int_field(j, "target_iter", 0, kMaxIndex));
}

std::vector<LoopRef> ComputeAtStep::loops() const { return {{target_stage, target_iter}}; }

StepPtr ComputeAtStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<ComputeAtStep>(stage, target_stage, loops.at(0).iter);
}

void ComputeInlineStep::apply_to(State& state) const {
  Stage& st = movable_stage(state, stage, "compute_inline");
  if (st.op->reduction()) throw StepError(fmt::format("compute_inline: '{}' is a reduction", st.op->name));
  if (state.is_kernel_output(stage)) throw StepError(fmt::format("compute_inline: '{}' is an output of the kernel", st.op->name));
  if (state.has_attached(stage)) throw StepError(fmt::format("compute_inline: stages are computed inside '{}'", st.op->name));
  st.location = ComputeLocation::Inlined;
  st.attach_stage = st.attach_iter = -1;
}

nlohmann::json ComputeInlineStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  return j;
}

std::string ComputeInlineStep::describe(const State& s) const { return fmt::format("compute_inline({})", stage_name(s, stage)); }

StepPtr ComputeInlineStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage"});
  return std::make_shared<ComputeInlineStep>(stage_field(j));
}

void ComputeRootStep::apply_to(State& state) const {
  Stage& st = movable_stage(state, stage, "compute_root");
  st.location = ComputeLocation::Root;
  st.attach_stage = st.attach_iter = -1;
  invalidate_extents(st);
}

nlohmann::json ComputeRootStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  return j;
}

std::string ComputeRootStep::describe(const State& s) const { return fmt::format("compute_root({})", stage_name(s, stage)); }

StepPtr ComputeRootStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage"});
  return std::make_shared<ComputeRootStep>(stage_field(j));
}

}  // namespace ansor
