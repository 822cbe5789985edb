// The transform steps (see schedule/step.h and generator/README.md, "schedule"). Fields are public and
// immutable: to change a step (annotation filling in tile sizes, mutation), build a new one and
// replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/stage.h"
#include "schedule/step.h"

namespace ansor {

// Splits loop `iter` of `stage` into an outer loop and one inner loop per length (the inner
// loops' extents, outermost first). A length of 0 is not decided yet (a sketch); such states can
// be printed but not lowered.
class SplitStep final : public Step {
 public:
  SplitStep(int stage, int iter, std::vector<int64_t> lengths) : Step(stage), iter(iter), lengths(std::move(lengths)) {}
  StepKind kind() const override { return StepKind::Split; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;

  const int iter;
  const std::vector<int64_t> lengths;
};

// Splits like an earlier split step (`src_step`, an index into the state's steps), with
// n_split inner loops: the first n_split - 1 lengths of the source and the product of the rest.
// Tiles of a consumer follow its producer's tiles this way, so that fusion lines up.
class FollowSplitStep final : public Step {
 public:
  FollowSplitStep(int stage, int iter, int src_step, int n_split) : Step(stage), iter(iter), src_step(src_step), n_split(n_split) {}
  StepKind kind() const override { return StepKind::FollowSplit; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;
  // The lengths this step splits with, from the state's history.
  std::vector<int64_t> lengths(const State& state) const;

  const int iter, src_step, n_split;
};

// Splits with one inner loop whose extent is the product of length `level` of several earlier
// split steps (the loops fused from them), e.g. a cache stage's loop bound to the same threads.
class FollowFusedSplitStep final : public Step {
 public:
  FollowFusedSplitStep(int stage, int iter, std::vector<int> src_steps, int level)
      : Step(stage), iter(iter), src_steps(std::move(src_steps)), level(level) {}
  StepKind kind() const override { return StepKind::FollowFusedSplit; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;
  int64_t length(const State& state) const;

  const int iter;
  const std::vector<int> src_steps;
  const int level;
};

// Puts the loops of `stage` in a new order: order[i] is the current position of the loop
// that becomes the i-th.
class ReorderStep final : public Step {
 public:
  ReorderStep(int stage, std::vector<int> order) : Step(stage), order(std::move(order)) {}
  StepKind kind() const override { return StepKind::Reorder; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;

  const std::vector<int> order;
};

// Fuses consecutive loops (positions in increasing order) into one.
class FuseStep final : public Step {
 public:
  FuseStep(int stage, std::vector<int> iters) : Step(stage), iters(std::move(iters)) {}
  StepKind kind() const override { return StepKind::Fuse; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;

  const std::vector<int> iters;
};

// Parallel, vectorize, unroll, or a GPU thread binding on one loop.
class AnnotateStep final : public Step {
 public:
  AnnotateStep(int stage, int iter, IterAnnotation annotation) : Step(stage), iter(iter), annotation(annotation) {}
  StepKind kind() const override { return StepKind::Annotate; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;

  const int iter;
  const IterAnnotation annotation;
};

// A stage pragma (pragma_kind.def) with its value, placed at loop `iter` (which must exist):
// `auto_unroll_max_step`, `prefetch_bytes` or `stream_stores`.
class PragmaStep final : public Step {
 public:
  PragmaStep(int stage, int iter, PragmaKind pragma, int64_t value) : Step(stage), iter(iter), pragma(pragma), value(value) {}
  StepKind kind() const override { return StepKind::Pragma; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;

  const int iter;
  const PragmaKind pragma;
  const int64_t value;
};

// Pads the stride of dimension `axis` of the stage's buffer to factor * k + offset.
class StorageAlignStep final : public Step {
 public:
  StorageAlignStep(int stage, int axis, int64_t factor, int64_t offset) : Step(stage), axis(axis), factor(factor), offset(offset) {}
  StepKind kind() const override { return StepKind::StorageAlign; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);

  const int axis;
  const int64_t factor, offset;
};

// Computes `stage` inside loop `target_iter` of `target_stage`, one region per iteration.
class ComputeAtStep final : public Step {
 public:
  ComputeAtStep(int stage, int target_stage, int target_iter) : Step(stage), target_stage(target_stage), target_iter(target_iter) {}
  StepKind kind() const override { return StepKind::ComputeAt; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  bool places_stage() const override { return true; }
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;

  const int target_stage, target_iter;
};

// Substitutes an elementwise stage into its consumers.
class ComputeInlineStep final : public Step {
 public:
  explicit ComputeInlineStep(int stage) : Step(stage) {}
  StepKind kind() const override { return StepKind::ComputeInline; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  bool places_stage() const override { return true; }

};

// Computes a stage at the root again, over its whole domain.
class ComputeRootStep final : public Step {
 public:
  explicit ComputeRootStep(int stage) : Step(stage) {}
  StepKind kind() const override { return StepKind::ComputeRoot; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  bool places_stage() const override { return true; }

};

// Adds a stage `<tensor>.<scope>` copying the tensor of `stage`, read by `readers` instead of
// the original (GPU shared memory tiles). The new stage follows `stage`.
class CacheReadStep final : public Step {
 public:
  CacheReadStep(int stage, MemoryScope scope, std::vector<int> readers) : Step(stage), scope(scope), readers(std::move(readers)) {}
  StepKind kind() const override { return StepKind::CacheRead; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::optional<InsertedStage> inserted_stage() const override;

  const MemoryScope scope;
  const std::vector<int> readers;
};

// Moves the computation of `stage` into a new stage `<tensor>.<scope>` before it; the stage
// itself copies the result out (accumulation in registers or local memory). Only for a stage
// not split or attached to yet.
class CacheWriteStep final : public Step {
 public:
  CacheWriteStep(int stage, MemoryScope scope) : Step(stage), scope(scope) {}
  StepKind kind() const override { return StepKind::CacheWrite; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::optional<InsertedStage> inserted_stage() const override;

  const MemoryScope scope;
};

// Factors the reduction loop `iter` out of the reduction of `stage`: a new stage
// `<tensor>.rf` computes partial results with that loop as a spatial axis (at position
// factor_axis among its axes), and the stage reduces them. The stage's spatial loops must not
// have been split yet.
class RfactorStep final : public Step {
 public:
  RfactorStep(int stage, int iter, int factor_axis) : Step(stage), iter(iter), factor_axis(factor_axis) {}
  StepKind kind() const override { return StepKind::Rfactor; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);
  std::vector<LoopRef> loops() const override;
  StepPtr with_loops(const std::vector<LoopRef>& loops) const override;
  std::optional<InsertedStage> inserted_stage() const override;

  const int iter, factor_axis;
};

// Stores an input in the order its consumer's loops read it: a `const` one packed ahead of time
// by the library's pack function, another by the kernel at the start of each call.
class LayoutRewriteStep final : public Step {
 public:
  explicit LayoutRewriteStep(int stage) : Step(stage) {}
  StepKind kind() const override { return StepKind::LayoutRewrite; }
  void apply_to(State& state) const override;
  nlohmann::json to_json() const override;
  std::string describe(const State& before) const override;
  static StepPtr from_json(const nlohmann::json& j);

};

}  // namespace ansor
