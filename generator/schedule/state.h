// State: a schedule of one ComputeDAG as the loop structure of every stage, and the transform
// steps that produced it from the untransformed DAG.
//
// Stages are in topological order. Steps that create stages (cache_read, cache_write,
// rfactor) insert them and shift the indices of the stages after them. Two states are equal
// when their loop structures are, whatever steps produced them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "schedule/stage.h"
#include "schedule/step.h"

namespace ansor {

class State {
 public:
  explicit State(std::shared_ptr<const ComputeDAG> dag);

  const ComputeDAG& dag() const { return *dag_; }
  const std::shared_ptr<const ComputeDAG>& dag_ptr() const { return dag_; }

  int num_stages() const { return static_cast<int>(stages_.size()); }
  const Stage& stage(int i) const { return stages_[i]; }
  Stage& mutable_stage(int i) { return stages_[i]; }
  const std::vector<Stage>& stages() const { return stages_; }
  // The stage computing the named tensor, -1 if none.
  int find_stage(const std::string& name) const;
  // The stage, or a StepError naming `what` when i is not a stage.
  const Stage& checked_stage(int i, const char* what) const;

  // Whether the stage's tensor is an output of the kernel.
  bool is_kernel_output(int stage) const;
  // The stages whose operations read the stage's tensor, in order.
  std::vector<int> readers(int stage) const;
  // The stages that use the stage's values: its readers, with inlined readers replaced by
  // their own consumers.
  std::vector<int> consumers(int stage) const;
  // Whether any stage is computed at (attached to) a loop of the stage.
  bool has_attached(int stage) const;

  // Inserts a stage at `position`, shifting the stages after it (and attachments to them).
  void insert_stage(int position, Stage stage);

  const std::vector<StepPtr>& steps() const { return steps_; }
  // Applies a step and records it. Throws StepError and leaves the state unchanged when the
  // step does not apply.
  void apply(const StepPtr& step);
  // Applies a step when it applies and says whether it did: for random choices, where one that
  // does not fit is simply not taken.
  bool try_apply(const StepPtr& step);

  // The loop structure as text: what equality and hashing compare.
  std::string signature() const;
  bool operator==(const State& other) const { return signature() == other.signature(); }
  size_t hash() const;

 private:
  std::shared_ptr<const ComputeDAG> dag_;
  std::vector<Stage> stages_;
  std::vector<StepPtr> steps_;
};

// The position of the loop of `target` inside which `stage` is computed (through a chain of
// attachments), or -1 when it is not computed inside target.
int stage_position_inside(const State& state, int stage, int target);

// The state the steps produce from the untransformed DAG. Throws StepError.
State replay(const std::shared_ptr<const ComputeDAG>& dag, const std::vector<StepPtr>& steps);

// Readable step list, one line per step, with names as they were when each step applied.
std::string describe_steps(const State& state);

}  // namespace ansor
