// Steps that annotate without changing the loop structure: annotate, pragma, storage_align.
#include <fmt/format.h>

#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

using namespace step_util;

void AnnotateStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "annotate");
  Iterator& it = st.iters[leaf_node(st, iter, "annotate")];
  if (annotation == IterAnnotation::None) throw StepError("annotate: no annotation");
  if (it.annotation != IterAnnotation::None)
    throw StepError(fmt::format("annotate: loop '{}' is already annotated {}", it.name, annotation_name(it.annotation)));
  // Iterations of a reduction loop update the same element: running them in parallel races,
  // except on the threads of a GPU block, which combine their values (a reduction across
  // threads, which lowering accepts as the stage's only and innermost reduction loop).
  if (it.kind != IterKind::Spatial && (annotation == IterAnnotation::Parallel ||
                                       (is_thread_binding(annotation) && annotation != IterAnnotation::ThreadX)))
    throw StepError(fmt::format("annotate: loop '{}' is a reduction loop and cannot be {}", it.name, annotation_name(annotation)));
  it.annotation = annotation;
}

nlohmann::json AnnotateStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j["annotation"] = std::string(annotation_name(annotation));
  return j;
}

std::string AnnotateStep::describe(const State& s) const {
  return fmt::format("annotate({}, {}, {})", stage_name(s, stage), loop_name(s, stage, iter), annotation_name(annotation));
}

StepPtr AnnotateStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iter", "annotation"});
  IterAnnotation a;
  std::string name = string_field(j, "annotation");
  if (!parse_annotation(name, a)) throw StepError(fmt::format("unknown annotation '{}'", name));
  return std::make_shared<AnnotateStep>(stage_field(j), iter_field(j), a);
}

std::vector<LoopRef> AnnotateStep::loops() const { return {{stage, iter}}; }

StepPtr AnnotateStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<AnnotateStep>(stage, loops.at(0).iter, annotation);
}

void PragmaStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "pragma");
  leaf_node(st, iter, "pragma");
  if (value < 0 || value > pragma_max_value(pragma))
    throw StepError(fmt::format("pragma: {} {} is out of range [0, {}]", pragma_name(pragma), value, pragma_max_value(pragma)));
  // Only a kernel output is memory that nothing in the kernel reads back.
  if (value != 0 && pragma_needs_unread_output(pragma) && (!state.is_kernel_output(stage) || !state.consumers(stage).empty()))
    throw StepError(fmt::format("pragma: {} needs a stage that stores a kernel output no other stage reads; '{}' is not one",
                                pragma_name(pragma), st.op->name));
  st.set_pragma(pragma, static_cast<int>(value));
}

nlohmann::json PragmaStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j[std::string(pragma_name(pragma))] = value;
  return j;
}

std::string PragmaStep::describe(const State& s) const {
  return fmt::format("pragma({}, {}, {}={})", stage_name(s, stage), loop_name(s, stage, iter), pragma_name(pragma), value);
}

StepPtr PragmaStep::from_json(const nlohmann::json& j) {
  // {"stage", "iter", <pragma name>: value}: the pragma is the one remaining key.
  std::string name;
  for (auto& [key, value] : j.items())
    if (key != "kind" && key != "stage" && key != "iter") name = key;
  PragmaKind pragma;
  if (!parse_pragma(name, pragma)) throw StepError(fmt::format("pragma: unknown or missing pragma '{}'", name));
  expect_keys(j, {"stage", "iter", name.c_str()});
  return std::make_shared<PragmaStep>(stage_field(j), iter_field(j), pragma, int64_field(j, name.c_str(), 0, pragma_max_value(pragma)));
}

std::vector<LoopRef> PragmaStep::loops() const { return {{stage, iter}}; }

StepPtr PragmaStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<PragmaStep>(stage, loops.at(0).iter, pragma, value);
}

void StorageAlignStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "storage_align");
  if (axis < 0 || axis >= st.num_spatial_roots())
    throw StepError(fmt::format("storage_align: '{}' has no dimension {}", st.op->name, axis));
  if (factor < 1 || factor > 4096 || offset < 0 || offset >= factor)
    throw StepError(fmt::format("storage_align: factor {} and offset {} must satisfy 1 <= factor <= 4096, 0 <= offset < factor", factor,
                                offset));
  st.align_dim = axis;
  st.align_factor = factor;
  st.align_offset = offset;
}

nlohmann::json StorageAlignStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["axis"] = axis;
  j["factor"] = factor;
  j["offset"] = offset;
  return j;
}

std::string StorageAlignStep::describe(const State& s) const {
  return fmt::format("storage_align({}, dim {}, {}, {})", stage_name(s, stage), axis, factor, offset);
}

StepPtr StorageAlignStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "axis", "factor", "offset"});
  return std::make_shared<StorageAlignStep>(stage_field(j), int_field(j, "axis", 0, kMaxList), int64_field(j, "factor", 1, 4096),
                                            int64_field(j, "offset", 0, 4095));
}

}  // namespace ansor
