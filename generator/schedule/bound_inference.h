// Bound inference: the loop nest a State describes, before any statement exists.
//
// Inlined stages are substituted into their consumers. Every computed stage gets one loop
// variable per leaf iterator, named in program order. A stage computed at the root loops over
// its whole domain; a stage attached inside another (compute_at) loops over the region that one
// iteration of the enclosing loops reads, an interval per dimension whose lower end is an
// expression of those enclosing loops (for a shared-memory stage, of those not bound to threads
// of the block: the threads share one region). From the regions follow the extents of every iterator and
// the value of every root axis in terms of the loops. Lowering builds statements from this;
// the sampler and steps use the extents (infer_bounds).
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/arith.h"
#include "schedule/state.h"

namespace ansor {

// A state that no valid step sequence produces (a lowering bug or a hand-made state).
class InvalidState : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The loop nest of one stage.
struct StageBounds {
  bool computed = false;         // a compute stage that gets its own loops
  Expr body;                     // the op's body with inlined producers substituted
  std::vector<Var> vars;         // per iterator: its loop variable (leaves only)
  std::vector<int64_t> extents;  // per iterator, where the stage is computed
  std::vector<Expr> values;      // per iterator: its value, from the loops
  std::vector<Expr> offsets;     // per root: the value within the region, from the loops
  std::vector<Expr> region_min;  // per spatial root
  std::vector<int64_t> region_extent;
  std::vector<bool> reduce_node;            // per iterator: depends on a reduction axis
  bool local = false;                       // stored in a buffer of the region's shape
  std::vector<const VarNode*> scope;        // loops enclosing the stage, outermost first
  std::vector<std::vector<int>> attached;   // per iterator: stages computed inside that loop
};

// The loop nests of every stage of a State.
class LoopNest {
 public:
  // Throws InvalidState.
  explicit LoopNest(const State& state);

  const State& state() const { return state_; }
  const StageBounds& stage(int s) const { return stages_[s]; }
  int64_t loop_extent(const VarNode* v) const { return loop_extent_.at(v); }
  const std::unordered_map<const VarNode*, int64_t>& loop_extents() const { return loop_extent_; }
  // The range of every loop variable, for simplification.
  const RangeMap& ranges() const { return ranges_; }
  // The loop variable object behind a variable node.
  const Var& loop_var(const VarNode* v) const;

  // The values of a computed stage's op axes and reduction axes in terms of its loops.
  VarMap root_values(int s) const;

  // A variable name not used by any loop so far (for variables that lowering adds).
  std::string unique_var_name(const std::string& base);
  // Registers the range of a variable that lowering adds.
  void add_range(const VarNode* v, int64_t extent) { ranges_[v] = Interval::range(extent); }

 private:
  [[noreturn]] void invalid(const std::string& msg) const;
  const std::string& name_of(int s) const;
  void validate();
  void substitute_inlined();
  void create_loop_vars(int s);
  void compute_region(int s);
  void compute_iterators(int s);
  // A thread's own buffer of a stage whose tile is wider than the region its consumers read (a
  // ragged split of an axis shorter than the tile) holds the whole tile, as the buffers of
  // ragged tiles at the end of longer axes do, so that lowering may compute the tile unguarded
  // (overshoots_unguarded in lower.cpp) and a tensor intrinsic's calls keep their whole shape.
  void widen_region_to_tile(int s);

  const State& state_;
  std::vector<StageBounds> stages_;
  std::unordered_map<const VarNode*, int64_t> loop_extent_;
  RangeMap ranges_;
  std::set<std::string> used_names_;
  std::vector<Var> all_vars_;
  std::unordered_map<const VarNode*, IterAnnotation> binding_;  // of every loop variable
};

// Sets the extent of every loop of every computed stage to what it is where the stage is
// computed (attached stages loop over their region). Throws InvalidState.
void infer_bounds(State& state);

}  // namespace ansor
