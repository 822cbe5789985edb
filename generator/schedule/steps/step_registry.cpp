// Step kinds by name, and steps from record JSON with every field checked.
#include <fmt/format.h>

#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

using namespace step_util;

namespace {
constexpr std::string_view kStepNames[] = {
#define STEP_KIND(Enum, name) name,
#include "schedule/step_kind.def"
};

std::vector<int> int_list(const nlohmann::json& j, const char* key) {
  std::vector<int> out;
  for (int64_t v : int_list_field(j, key, 0, kMaxIndex, kMaxList)) out.push_back(static_cast<int>(v));
  return out;
}

MemoryScope scope_field(const nlohmann::json& j) {
  MemoryScope scope;
  std::string name = string_field(j, "scope");
  if (!parse_memory_scope(name, scope)) throw StepError(fmt::format("unknown memory scope '{}'", name));
  return scope;
}

StepPtr parse(StepKind kind, const nlohmann::json& j) {
  auto stage = [&] { return int_field(j, "stage", 0, kMaxIndex); };
  auto iter = [&] { return int_field(j, "iter", 0, kMaxIndex); };
  switch (kind) {
    case StepKind::Split:
      expect_keys(j, {"stage", "iter", "lengths"});
      return std::make_shared<SplitStep>(stage(), iter(), int_list_field(j, "lengths", 0, kMaxLength, kMaxList));
    case StepKind::FollowSplit:
      expect_keys(j, {"stage", "iter", "src_step", "n_split"});
      return std::make_shared<FollowSplitStep>(stage(), iter(), int_field(j, "src_step", 0, kMaxIndex),
                                               int_field(j, "n_split", 1, kMaxList));
    case StepKind::FollowFusedSplit:
      expect_keys(j, {"stage", "iter", "src_steps", "level"});
      return std::make_shared<FollowFusedSplitStep>(stage(), iter(), int_list(j, "src_steps"), int_field(j, "level", 0, kMaxList));
    case StepKind::Reorder:
      expect_keys(j, {"stage", "order"});
      return std::make_shared<ReorderStep>(stage(), int_list(j, "order"));
    case StepKind::Fuse:
      expect_keys(j, {"stage", "iters"});
      return std::make_shared<FuseStep>(stage(), int_list(j, "iters"));
    case StepKind::Annotate: {
      expect_keys(j, {"stage", "iter", "annotation"});
      IterAnnotation a;
      std::string name = string_field(j, "annotation");
      if (!parse_annotation(name, a)) throw StepError(fmt::format("unknown annotation '{}'", name));
      return std::make_shared<AnnotateStep>(stage(), iter(), a);
    }
    case StepKind::Pragma: {
      // {"stage", "iter", <pragma name>: value}: the pragma is the one remaining key.
      std::string name;
      for (auto& [key, value] : j.items())
        if (key != "kind" && key != "stage" && key != "iter") name = key;
      PragmaKind pragma;
      if (!parse_pragma(name, pragma)) throw StepError(fmt::format("pragma: unknown or missing pragma '{}'", name));
      expect_keys(j, {"stage", "iter", name.c_str()});
      return std::make_shared<PragmaStep>(stage(), iter(), pragma, int64_field(j, name.c_str(), 0, pragma_max_value(pragma)));
    }
    case StepKind::StorageAlign:
      expect_keys(j, {"stage", "axis", "factor", "offset"});
      return std::make_shared<StorageAlignStep>(stage(), int_field(j, "axis", 0, kMaxList), int64_field(j, "factor", 1, 4096),
                                                int64_field(j, "offset", 0, 4095));
    case StepKind::ComputeAt:
      expect_keys(j, {"stage", "target_stage", "target_iter"});
      return std::make_shared<ComputeAtStep>(stage(), int_field(j, "target_stage", 0, kMaxIndex), int_field(j, "target_iter", 0, kMaxIndex));
    case StepKind::ComputeInline:
      expect_keys(j, {"stage"});
      return std::make_shared<ComputeInlineStep>(stage());
    case StepKind::ComputeRoot:
      expect_keys(j, {"stage"});
      return std::make_shared<ComputeRootStep>(stage());
    case StepKind::CacheRead:
      expect_keys(j, {"stage", "scope", "readers"});
      return std::make_shared<CacheReadStep>(stage(), scope_field(j), int_list(j, "readers"));
    case StepKind::CacheWrite:
      expect_keys(j, {"stage", "scope"});
      return std::make_shared<CacheWriteStep>(stage(), scope_field(j));
    case StepKind::Rfactor:
      expect_keys(j, {"stage", "iter", "factor_axis"});
      return std::make_shared<RfactorStep>(stage(), iter(), int_field(j, "factor_axis", 0, kMaxList));
    case StepKind::LayoutRewrite:
      expect_keys(j, {"stage"});
      return std::make_shared<LayoutRewriteStep>(stage());
  }
  throw StepError("unknown step kind");
}

}  // namespace

std::string_view step_kind_name(StepKind k) { return kStepNames[static_cast<int>(k)]; }

StepPtr step_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw StepError("a step must be a JSON object");
  std::string name = string_field(j, "kind");
  for (size_t i = 0; i < std::size(kStepNames); ++i)
    if (kStepNames[i] == name) return parse(static_cast<StepKind>(i), j);
  throw StepError(fmt::format("unknown step kind '{}'", name));
}

}  // namespace ansor
