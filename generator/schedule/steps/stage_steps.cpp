// Steps that create stages or change what a stage stores: cache_read, cache_write, rfactor,
// layout_rewrite.
#include <fmt/format.h>

#include <algorithm>

#include "ir/arith.h"
#include "schedule/iter_graph.h"
#include "schedule/steps.h"
#include "schedule/steps/step_util.h"

namespace ansor {

using namespace step_util;

namespace {

std::string unique_stage_name(const State& state, const std::string& base) {
  std::string name = base;
  for (int i = 1; state.find_stage(name) >= 0; ++i) name = fmt::format("{}.{}", base, i);
  return name;
}

// Fresh axes with the names and extents of op's axes (or ax0, ax1, ... for inputs).
std::vector<IterVar> fresh_axes(const Operation& op) {
  std::vector<IterVar> axes;
  for (size_t d = 0; d < op.shape.size(); ++d)
    axes.push_back({make_var(op.is_placeholder() ? "ax" + std::to_string(d) : op.axes[d].var->name), op.shape[d]});
  return axes;
}

OpPtr with_body(const Operation& op, Expr body) {
  auto copy = std::make_shared<Operation>(op);
  copy->body = std::move(body);
  return copy;
}

bool untransformed(const Stage& st) {
  if (!st.relations.empty() || static_cast<int>(st.leaves.size()) != st.num_roots) return false;
  for (int i = 0; i < st.num_roots; ++i)
    if (st.leaves[i] != i || st.iters[i].annotation != IterAnnotation::None) return false;
  return true;
}

}  // namespace

void CacheReadStep::apply_to(State& state) const {
  const Stage& src = state.checked_stage(stage, "cache_read");
  if (src.location == ComputeLocation::Inlined) throw StepError(fmt::format("cache_read: '{}' is inlined", src.op->name));
  if (readers.empty()) throw StepError("cache_read: no readers");
  std::vector<int> actual = state.readers(stage);
  for (size_t i = 0; i < readers.size(); ++i) {
    if (std::find(actual.begin(), actual.end(), readers[i]) == actual.end())
      throw StepError(fmt::format("cache_read: stage {} does not read '{}'", readers[i], src.op->name));
    if (std::find(readers.begin(), readers.begin() + i, readers[i]) != readers.begin() + i)
      throw StepError(fmt::format("cache_read: stage {} listed twice", readers[i]));
  }
  const Operation& op = *src.op;
  std::string name = unique_stage_name(state, op.name + "." + std::string(memory_scope_name(scope)));
  std::vector<IterVar> axes = fresh_axes(op);
  Stage cache = make_initial_stage(make_compute(name, axes, load(op.name, op.dtype, axis_exprs(axes))));
  cache.scope = scope;
  state.insert_stage(stage + 1, std::move(cache));
  for (int r : readers) {
    Stage& reader = state.mutable_stage(r + 1);
    reader.op = with_body(*reader.op, replace_loads(reader.op->body, op.name, [&](const std::vector<Expr>& idx) {
      return load(name, op.dtype, idx);
    }));
  }
}

nlohmann::json CacheReadStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["scope"] = std::string(memory_scope_name(scope));
  j["readers"] = readers;
  return j;
}

std::string CacheReadStep::describe(const State& s) const {
  std::vector<std::string> names;
  for (int r : readers) names.push_back(stage_name(s, r));
  return fmt::format("cache_read({}, {}, [{}])", stage_name(s, stage), memory_scope_name(scope), fmt::join(names, ", "));
}

StepPtr CacheReadStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "scope", "readers"});
  return std::make_shared<CacheReadStep>(stage_field(j), scope_field(j), index_list_field(j, "readers"));
}

std::optional<InsertedStage> CacheReadStep::inserted_stage() const { return InsertedStage{stage + 1, readers.at(0)}; }

void CacheWriteStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "cache_write");
  if (!untransformed(st) || st.location != ComputeLocation::Root)
    throw StepError(fmt::format("cache_write: '{}' must be untransformed and computed at the root", st.op->name));
  if (state.has_attached(stage)) throw StepError(fmt::format("cache_write: stages are computed inside '{}'", st.op->name));
  const Operation& op = *st.op;
  std::string name = unique_stage_name(state, op.name + "." + std::string(memory_scope_name(scope)));
  auto cache_op = std::make_shared<Operation>(op);
  cache_op->name = name;
  std::vector<IterVar> axes = fresh_axes(op);
  Stage copy_out = make_initial_stage(make_compute(op.name, axes, load(name, op.dtype, axis_exprs(axes))));
  copy_out.pragmas = st.pragmas;
  st = std::move(copy_out);
  Stage cache = make_initial_stage(cache_op);
  cache.scope = scope;
  state.insert_stage(stage, std::move(cache));
}

nlohmann::json CacheWriteStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["scope"] = std::string(memory_scope_name(scope));
  return j;
}

std::string CacheWriteStep::describe(const State& s) const {
  return fmt::format("cache_write({}, {})", stage_name(s, stage), memory_scope_name(scope));
}

StepPtr CacheWriteStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "scope"});
  return std::make_shared<CacheWriteStep>(stage_field(j), scope_field(j));
}

std::optional<InsertedStage> CacheWriteStep::inserted_stage() const { return InsertedStage{stage, stage}; }

void RfactorStep::apply_to(State& state) const {
  Stage& st = loop_stage(state, stage, "rfactor");
  const Operation& op = *st.op;
  const ReduceNode* red = op.reduction();
  if (!red) throw StepError(fmt::format("rfactor: '{}' is not a reduction", op.name));
  if (st.location != ComputeLocation::Root || state.has_attached(stage))
    throw StepError(fmt::format("rfactor: '{}' must be computed at the root with nothing inside it", op.name));
  int n = st.num_spatial_roots();
  for (const IterRelation& rel : st.relations)
    for (int i : rel.inputs)
      if (i < n) throw StepError(fmt::format("rfactor: the spatial loops of '{}' must not be split or fused", op.name));
  int chosen = leaf_node(st, iter, "rfactor");
  if (chosen < n || st.iters[chosen].kind != IterKind::Reduce)
    throw StepError(fmt::format("rfactor: loop '{}' is not a reduction loop", st.iters[chosen].name));
  if (factor_axis < 0 || factor_axis > n) throw StepError(fmt::format("rfactor: factor_axis {} is out of range [0, {}]", factor_axis, n));
  for (int leaf : st.leaves)
    if (st.iters[leaf].annotation != IterAnnotation::None) throw StepError("rfactor: the loops must not be annotated yet");

  std::vector<int64_t> root_extents;
  for (auto& ax : op.axes) root_extents.push_back(ax.extent);
  for (auto& ax : red->axes) root_extents.push_back(ax.extent);
  std::vector<int64_t> extents = propagate_extents(st, root_extents);

  // The partial results: the op's axes with the chosen loop inserted, reduced over the others.
  std::vector<IterVar> rf_axes, spatial = fresh_axes(op), rf_reduce;
  std::vector<Expr> values(st.iters.size());
  RangeMap ranges;
  for (int leaf : st.leaves) {
    if (leaf < n) continue;
    // A sketch's undecided lengths leave extents unknown (-1) until annotation replays it.
    IterVar v{make_var(st.iters[leaf].name), extents[leaf]};
    values[leaf] = v.var;
    if (v.extent > 0) ranges[v.var.get()] = Interval::range(v.extent);
    if (leaf == chosen) {
      rf_axes = spatial;
      rf_axes.insert(rf_axes.begin() + factor_axis, v);
    } else {
      rf_reduce.push_back(v);
    }
  }
  for (int r = 0; r < n; ++r) values[r] = spatial[r].var;
  propagate_values(st, extents, values);
  VarMap map;
  for (int r = 0; r < n; ++r) map.push_back({op.axes[r].var.get(), spatial[r].var});
  for (size_t i = 0; i < red->axes.size(); ++i) map.push_back({red->axes[i].var.get(), simplify(values[n + i], ranges)});
  // A ragged split overshoots its parent: keep only the iterations inside every split parent.
  Expr in_range;
  for (const IterRelation& rel : st.relations) {
    int parent = rel.inputs[0];
    if (rel.kind != IterRelation::Kind::Split || parent < n || extents[parent] < 0) continue;
    Expr v = simplify(values[parent], ranges);
    if (bound_of(v, ranges).max >= extents[parent]) {
      Expr c = lt(v, int_imm(extents[parent]));
      in_range = in_range ? logical_and(in_range, c) : c;
    }
  }
  Expr rf_cond = red->condition ? substitute(red->condition, map) : nullptr;
  if (in_range) rf_cond = rf_cond ? logical_and(rf_cond, in_range) : in_range;
  Expr rf_source = substitute(red->source, map);
  // A reduction over nothing but the chosen loop leaves each partial result a single value.
  Expr rf_body = rf_reduce.empty() && !rf_cond ? rf_source
                 : rf_reduce.empty() ? select(rf_cond, rf_source, reduce_identity(red->op, op.dtype))
                                     : reduce(red->op, rf_reduce, rf_source, rf_cond);
  std::string rf_name = unique_stage_name(state, op.name + ".rf");
  OpPtr rf_op = make_compute(rf_name, rf_axes, rf_body);

  std::vector<IterVar> axes = fresh_axes(op);
  IterVar k{make_var(st.iters[chosen].name), extents[chosen]};
  std::vector<Expr> idx = axis_exprs(axes);
  idx.insert(idx.begin() + factor_axis, k.var);
  st = make_initial_stage(make_compute(op.name, axes, reduce(red->op, {k}, load(rf_name, op.dtype, idx))));
  state.insert_stage(stage, make_initial_stage(rf_op));
}

nlohmann::json RfactorStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  j["iter"] = iter;
  j["factor_axis"] = factor_axis;
  return j;
}

std::string RfactorStep::describe(const State& s) const {
  return fmt::format("rfactor({}, {}, axis {})", stage_name(s, stage), loop_name(s, stage, iter), factor_axis);
}

StepPtr RfactorStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage", "iter", "factor_axis"});
  return std::make_shared<RfactorStep>(stage_field(j), iter_field(j), int_field(j, "factor_axis", 0, kMaxList));
}

std::vector<LoopRef> RfactorStep::loops() const { return {{stage, iter}}; }

StepPtr RfactorStep::with_loops(const std::vector<LoopRef>& loops) const {
  return std::make_shared<RfactorStep>(stage, loops.at(0).iter, factor_axis);
}

std::optional<InsertedStage> RfactorStep::inserted_stage() const { return InsertedStage{stage, stage}; }

void LayoutRewriteStep::apply_to(State& state) const {
  const Stage& st = state.checked_stage(stage, "layout_rewrite");
  if (!st.is_placeholder()) throw StepError(fmt::format("layout_rewrite: '{}' is not an input", st.op->name));
  if (state.consumers(stage).size() != 1)
    throw StepError(fmt::format("layout_rewrite: '{}' must have exactly one consumer", st.op->name));
  state.mutable_stage(stage).layout_rewrite = true;
}

nlohmann::json LayoutRewriteStep::to_json() const {
  nlohmann::json j = header(kind());
  j["stage"] = stage;
  return j;
}

std::string LayoutRewriteStep::describe(const State& s) const { return fmt::format("layout_rewrite({})", stage_name(s, stage)); }

StepPtr LayoutRewriteStep::from_json(const nlohmann::json& j) {
  expect_keys(j, {"stage"});
  return std::make_shared<LayoutRewriteStep>(stage_field(j));
}

}  // namespace ansor
