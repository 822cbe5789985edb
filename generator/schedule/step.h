// Transform steps: the genes of a schedule.
//
// Sketch rules, annotation, mutation and crossover all write steps; records store them; builds
// replay them. A step checks that it applies to a state (throwing StepError with the reason,
// leaving the state unchanged) and then transforms it. Loops are named by their position in a
// stage's loop list and stages by their position in the state, as they are when the step is
// applied; steps that create stages shift the positions after them.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ansor {

class State;

enum class StepKind : uint8_t {
#define STEP_KIND(Enum, name) Enum,
#include "schedule/step_kind.def"
};

std::string_view step_kind_name(StepKind k);

// A step that does not apply to a state, or a malformed step in a record.
class StepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Step {
 public:
  virtual ~Step() = default;
  virtual StepKind kind() const = 0;
  // Checks the step against the state and applies it; throws StepError if it does not apply.
  // The state may be partly changed after a throw: State::apply works on a copy.
  virtual void apply_to(State& state) const = 0;
  // {"kind": "<name>", ...fields}
  virtual nlohmann::json to_json() const = 0;
  // A readable form with names from the state before the step, e.g. `split(C, i, [8, 4])`.
  virtual std::string describe(const State& before) const = 0;
};

using StepPtr = std::shared_ptr<const Step>;

// Parses a step from a record. Every field is checked for type and range; names and numbers
// from untrusted records never reach emitted code without that check. Throws StepError.
StepPtr step_from_json(const nlohmann::json& j);

}  // namespace ansor
