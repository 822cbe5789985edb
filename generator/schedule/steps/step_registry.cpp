// Step kinds by name (step_kind.def), and steps from record JSON through each kind's from_json.
#include <fmt/format.h>

#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

namespace {
struct StepKindInfo {
  std::string_view name;
  StepPtr (*from_json)(const nlohmann::json& j);
};
constexpr StepKindInfo kStepKinds[] = {
#define STEP_KIND(Enum, name, Class) {name, &Class::from_json},
#include "schedule/step_kind.def"
};
}  // namespace

std::string_view step_kind_name(StepKind k) { return kStepKinds[static_cast<int>(k)].name; }

StepPtr step_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw StepError("a step must be a JSON object");
  std::string name = step_util::string_field(j, "kind");
  for (const StepKindInfo& kind : kStepKinds)
    if (kind.name == name) return kind.from_json(j);
  throw StepError(fmt::format("unknown step kind '{}'", name));
}

}  // namespace ansor
