// Loop variables, regions and extents of every computed stage.
#include "schedule/bound_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "schedule/iter_graph.h"
#include "schedule/sym_interval.h"

namespace ansor {

namespace {

int64_t reduce_extent(const Stage& st, int root) { return st.op->reduction()->axes[root - st.num_spatial_roots()].extent; }

// Loops that run as threads of one GPU block (virtual threads included).
bool is_thread_index(IterAnnotation a) { return thread_axis(a) >= 0 || a == IterAnnotation::VThread; }

}  // namespace

LoopNest::LoopNest(const State& state) : state_(state), stages_(state.num_stages()) {
  validate();
  substitute_inlined();
  // Loop variables are named in program order, so the first loop named i is plain `i`.
  for (int s = 0; s < state_.num_stages(); ++s)
    if (stages_[s].computed) create_loop_vars(s);
  // Consumers first: a stage's region follows from the loops of the stages that read it.
  for (int s = state_.num_stages() - 1; s >= 0; --s) {
    if (!stages_[s].computed) continue;
    compute_region(s);
    compute_iterators(s);
    widen_region_to_tile(s);
  }
}

void LoopNest::invalid(const std::string& msg) const { throw InvalidState("cannot lower the schedule: " + msg); }

const std::string& LoopNest::name_of(int s) const { return state_.stage(s).op->name; }

const Var& LoopNest::loop_var(const VarNode* v) const {
  auto it = std::find_if(all_vars_.begin(), all_vars_.end(), [&](const Var& x) { return x.get() == v; });
  if (it == all_vars_.end()) throw std::logic_error("bound inference: '" + v->name + "' is not a loop variable");
  return *it;
}

void LoopNest::validate() {
  for (int s = 0; s < state_.num_stages(); ++s) {
    const Stage& st = state_.stage(s);
    stages_[s].computed = !st.is_placeholder() && st.location != ComputeLocation::Inlined;
    stages_[s].attached.assign(st.iters.size(), {});
    if (st.location == ComputeLocation::Inlined) {
      if (st.is_placeholder() || st.op->reduction() || state_.is_kernel_output(s))
        invalid(fmt::format("stage '{}' cannot be inlined", name_of(s)));
    }
  }
  for (int s = 0; s < state_.num_stages(); ++s) {
    const Stage& st = state_.stage(s);
    if (st.location != ComputeLocation::At) continue;
    int t = st.attach_stage;
    if (st.is_placeholder() || t <= s || t >= state_.num_stages() || !stages_[t].computed)
      invalid(fmt::format("stage '{}' is attached to an invalid stage", name_of(s)));
    if (st.attach_iter < 0 || st.attach_iter >= static_cast<int>(state_.stage(t).iters.size()) ||
        state_.stage(t).leaf_position(st.attach_iter) < 0)
      invalid(fmt::format("stage '{}' is attached to a loop '{}' does not have", name_of(s), name_of(t)));
    stages_[t].attached[st.attach_iter].push_back(s);
  }
}

void LoopNest::substitute_inlined() {
  for (int s = 0; s < state_.num_stages(); ++s) {
    const Stage& st = state_.stage(s);
    if (st.is_placeholder()) continue;
    stages_[s].body = rewrite_post_order(st.op->body, [&](const Expr& e) -> Expr {
      auto* l = e->as<LoadNode>();
      if (!l) return nullptr;
      int p = state_.find_stage(l->tensor);
      if (p < 0 || state_.stage(p).location != ComputeLocation::Inlined) return nullptr;
      VarMap map;
      const Operation& op = *state_.stage(p).op;
      for (size_t d = 0; d < op.axes.size(); ++d) map.push_back({op.axes[d].var.get(), l->indices[d]});
      return substitute(stages_[p].body, map);
    });
  }
}

VarMap LoopNest::root_values(int s) const {
  const Stage& st = state_.stage(s);
  const StageBounds& in = stages_[s];
  VarMap map;
  int n = st.num_spatial_roots();
  for (int d = 0; d < n; ++d) map.push_back({st.op->axes[d].var.get(), add(in.region_min[d], in.offsets[d])});
  if (const ReduceNode* r = st.op->reduction())
    for (size_t i = 0; i < r->axes.size(); ++i) map.push_back({r->axes[i].var.get(), in.offsets[n + i]});
  return map;
}

void LoopNest::compute_region(int s) {
  const Stage& st = state_.stage(s);
  StageBounds& in = stages_[s];
  int n = st.num_spatial_roots();
  in.region_min.assign(n, int_imm(0));
  in.region_extent = st.op->shape;
  if (st.location != ComputeLocation::At) return;

  int t = st.attach_stage;
  const Stage& target = state_.stage(t);
  in.scope = stages_[t].scope;
  int pos = target.leaf_position(st.attach_iter);
  for (int p = 0; p <= pos; ++p) in.scope.push_back(stages_[t].vars[target.leaves[p]].get());
  in.local = true;

  // A shared buffer serves every thread of a block: its region spans the loops bound to thread
  // indices around it, as each thread's own (local) buffer does not.
  std::unordered_set<const VarNode*> fixed;
  for (const VarNode* v : in.scope)
    if (st.scope != MemoryScope::Shared || !is_thread_index(binding_.at(v))) fixed.insert(v);
  std::unordered_map<const VarNode*, int64_t> relaxed;
  for (auto& [var, extent] : loop_extent_)
    if (!fixed.count(var)) relaxed[var] = extent;

  std::vector<SymInterval> region(n);
  bool found = false;
  for (int c = s + 1; c < state_.num_stages(); ++c) {
    if (!stages_[c].computed) continue;
    VarMap values = root_values(c);
    for (const LoadNode* l : collect_loads(stages_[c].body)) {
      if (l->tensor != st.op->name) continue;
      for (int d = 0; d < n; ++d) {
        SymInterval iv = relax(simplify(substitute(l->indices[d], values)), relaxed);
        region[d] = found ? union_of(region[d], iv) : iv;
      }
      found = true;
    }
  }
  if (!found) invalid(fmt::format("stage '{}' is attached but nothing reads it", name_of(s)));
  for (int d = 0; d < n; ++d) {
    // A block's shared copy keeps its whole tile where the tile is wider than the tensor, so that
    // the tile's threads read inside it (lower.cpp, overshoots_unguarded).
    const bool whole_tile = st.scope == MemoryScope::Shared && !region[d].unknown;
    if (region[d].unknown || (region[d].span + 1 >= st.op->shape[d] && !whole_tile)) continue;
    in.region_min[d] = simplify(region[d].lo, ranges_);
    in.region_extent[d] = region[d].span + 1;
    visit_pre_order(in.region_min[d], [&](const Expr& e) {
      if (e->kind == ExprKind::Var && !fixed.count(e->as<VarNode>()))
        invalid(fmt::format("stage '{}' is attached inside '{}' but is read outside that loop", name_of(s), name_of(t)));
      return true;
    });
  }
}

std::string LoopNest::unique_var_name(const std::string& base) {
  std::string name = base;
  for (int i = 1; !used_names_.insert(name).second; ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

void LoopNest::create_loop_vars(int s) {
  const Stage& st = state_.stage(s);
  stages_[s].vars.assign(st.iters.size(), nullptr);
  for (int leaf : st.leaves) {
    stages_[s].vars[leaf] = make_var(unique_var_name(st.iters[leaf].name));
    all_vars_.push_back(stages_[s].vars[leaf]);
    binding_[stages_[s].vars[leaf].get()] = st.iters[leaf].annotation;
  }
}

void LoopNest::compute_iterators(int s) {
  const Stage& st = state_.stage(s);
  StageBounds& in = stages_[s];
  for (const IterRelation& rel : st.relations)
    for (int64_t f : rel.factors)
      if (f < 1) invalid(fmt::format("a split of '{}' has an undecided length", name_of(s)));
  std::vector<int64_t> root_extents(st.num_roots);
  for (int r = 0; r < st.num_roots; ++r) root_extents[r] = r < st.num_spatial_roots() ? in.region_extent[r] : reduce_extent(st, r);
  in.extents = propagate_extents(st, root_extents);
  in.reduce_node = reduction_iterators(st);
  std::vector<Expr> value(st.iters.size());
  for (int leaf : st.leaves) {
    if (in.extents[leaf] < 1) invalid(fmt::format("loop '{}' of '{}' has no extent", st.iters[leaf].name, name_of(s)));
    value[leaf] = in.vars[leaf];
    loop_extent_[in.vars[leaf].get()] = in.extents[leaf];
    ranges_[in.vars[leaf].get()] = Interval::range(in.extents[leaf]);
  }
  try {
    propagate_values(st, in.extents, value);
  } catch (const std::logic_error& e) {
    invalid(e.what());
  }
  in.offsets.clear();
  for (int r = 0; r < st.num_roots; ++r) {
    if (!value[r]) invalid(fmt::format("axis '{}' of '{}' has no loop", st.iters[r].name, name_of(s)));
    in.offsets.push_back(simplify(value[r], ranges_));
  }
  in.values = std::move(value);
}

void LoopNest::widen_region_to_tile(int s) {
  const Stage& st = state_.stage(s);
  StageBounds& in = stages_[s];
  if (!in.local || st.scope == MemoryScope::Shared) return;
  // A GPU thread's buffer lives in registers, counted against the launch's limits.
  for (const VarNode* v : in.scope)
    if (is_thread_index(binding_.at(v)) || is_block_index(binding_.at(v))) return;
  for (int d = 0; d < st.num_spatial_roots(); ++d) {
    if (!is_const_int(in.region_min[d], 0)) continue;
    const Interval covered = bound_of(in.offsets[d], ranges_);
    if (covered.min >= 0 && covered.max >= in.region_extent[d]) in.region_extent[d] = covered.max + 1;
  }
}

void infer_bounds(State& state) {
  LoopNest nest(state);
  for (int s = 0; s < state.num_stages(); ++s) {
    Stage& st = state.mutable_stage(s);
    const std::vector<int64_t>& extents = nest.stage(s).extents;
    for (size_t i = 0; i < extents.size(); ++i) st.iters[i].extent = extents[i];
  }
}

}  // namespace ansor
