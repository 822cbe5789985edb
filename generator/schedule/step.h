// Transform steps: the genes of a schedule.
//
// Sketch rules, annotation, mutation and crossover all write steps; records store them; builds
// replay them. A step checks that it applies to a state (throwing StepError with the reason,
// leaving the state unchanged) and then transforms it. Loops are named by their position in a
// stage's loop list and stages by their position in the state, as they are when the step is
// applied; steps that create stages shift the positions after them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ansor {

class State;

enum class StepKind : uint8_t {
#define STEP_KIND(Enum, name, Class) Enum,
#include "schedule/step_kind.def"
};

std::string_view step_kind_name(StepKind k);

// A step that does not apply to a state, or a malformed step in a record.
class StepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Step;
using StepPtr = std::shared_ptr<const Step>;

// A loop a step names: position `iter` among the loops of stage `stage`, as when the step
// applies.
struct LoopRef {
  int stage, iter;
};

// The stage a step inserts (Step::inserted_stage): at `position`, shifting the stages from there
// on, made for stage `owner` as numbered before the step (the reader a cache_read stage feeds;
// the stage whose computation cache_write or rfactor splits off).
struct InsertedStage {
  int position, owner;
};

// Each kind is a class of schedule/steps.h, listed in step_kind.def with a static
// `from_json(const nlohmann::json&) -> StepPtr` that step_from_json calls by the kind's name.
class Step {
 public:
  explicit Step(int stage) : stage(stage) {}
  virtual ~Step() = default;
  virtual StepKind kind() const = 0;
  // Checks the step against the state and applies it; throws StepError if it does not apply.
  // The state may be partly changed after a throw: State::apply works on a copy.
  virtual void apply_to(State& state) const = 0;
  // {"kind": "<name>", ...fields}
  virtual nlohmann::json to_json() const = 0;
  // A readable form with names from the state before the step, e.g. `split(C, i, [8, 4])`.
  virtual std::string describe(const State& before) const = 0;

  // The loops the step names: its own stage's, or for compute_at the target's.
  virtual std::vector<LoopRef> loops() const { return {}; }
  // The same step naming `loops` instead (loops() with other positions), or nullptr when the
  // step cannot name other loops (a reorder: its order is a permutation of all of them).
  virtual StepPtr with_loops(const std::vector<LoopRef>&) const { return nullptr; }
  // Whether the step chooses where its stage is computed (compute_at, compute_inline,
  // compute_root).
  virtual bool places_stage() const { return false; }
  virtual std::optional<InsertedStage> inserted_stage() const { return std::nullopt; }

  // The stage the step works on, as numbered when it applies (compute_at: the stage it moves).
  const int stage;
};

// The step with every loop position p of `stage` that it names replaced by map(p), for
// mutation and crossover, which rebuild step lists: the same step when none changes, nullptr
// when map gives -1 for one of them (the loop is gone) or the step cannot name other loops.
StepPtr remap_loops(const StepPtr& step, int stage, const std::function<int(int)>& map);

// Parses a step from a record. Every field is checked for type and range; names and numbers
// from untrusted records never reach emitted code without that check. Throws StepError.
StepPtr step_from_json(const nlohmann::json& j);

}  // namespace ansor
