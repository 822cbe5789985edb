// Multi-level tiling, fusion of consumers into tiles, and the analyses the rules share.
#include <fmt/format.h>

#include <algorithm>

#include "dag/access_analysis.h"
#include "sampler/sketch_rule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

bool untransformed(const Stage& st) {
  if (!st.relations.empty() || static_cast<int>(st.leaves.size()) != st.num_roots) return false;
  for (int i = 0; i < st.num_roots; ++i)
    if (st.leaves[i] != i) return false;
  return true;
}

// Whether the value of `producer` reaches `target` through elementwise accesses of inlined
// stages only.
bool elementwise_path(const State& s, int producer, int target) {
  std::vector<int> readers = s.readers(producer);
  if (readers.size() != 1) return false;
  int r = readers[0];
  if (!elementwise_match(*s.stage(producer).op, *s.stage(r).op)) return false;
  if (r == target) return true;
  return s.stage(r).location == ComputeLocation::Inlined && elementwise_path(s, r, target);
}

// The node ids created by the last split of a stage (outer part first).
std::vector<int> last_split_outputs(const State& s, int stage) { return s.stage(stage).relations.back().outputs; }

}  // namespace

int fusible_consumer(const State& state, int stage) {
  std::vector<int> consumers = state.consumers(stage);
  if (consumers.size() != 1) return -1;
  int c = consumers[0];
  const Stage& cs = state.stage(c);
  if (cs.is_placeholder() || cs.location != ComputeLocation::Root || cs.op->reduction() || !untransformed(cs)) return -1;
  return elementwise_path(state, stage, c) ? c : -1;
}

bool needs_multi_level_tiling(const State& state, int stage) {
  const Stage& st = state.stage(stage);
  return !st.is_placeholder() && st.location == ComputeLocation::Root && untransformed(st) && ansor::needs_multi_level_tiling(*st.op);
}

State multi_level_tiling(const State& state, int stage, const std::string& structure, std::vector<int>& spatial_splits) {
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  const int s_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'S'));
  const int r_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'R'));
  std::vector<std::vector<int>> parts(roots);
  spatial_splits.assign(spatial, -1);
  for (int r = 0; r < roots; ++r) {
    int levels = r < spatial ? s_levels : r_levels;
    const Stage& st = s.stage(stage);
    if (st.iters[r].extent <= 1 || levels <= 1) {
      parts[r] = {r};
      continue;
    }
    s.apply(std::make_shared<SplitStep>(stage, st.leaf_position(r), std::vector<int64_t>(levels - 1, 0)));
    parts[r] = last_split_outputs(s, stage);
    if (r < spatial) spatial_splits[r] = static_cast<int>(s.steps().size()) - 1;
  }
  // Level by level as the structure says; axes not split appear at their first level.
  std::vector<int> order_nodes;
  int s_level = 0, r_level = 0;
  for (char c : structure) {
    bool is_spatial = c == 'S';
    int level = is_spatial ? s_level++ : r_level++;
    for (int r = is_spatial ? 0 : spatial; r < (is_spatial ? spatial : roots); ++r)
      if (level < static_cast<int>(parts[r].size())) order_nodes.push_back(parts[r][level]);
  }
  const Stage& st = s.stage(stage);
  std::vector<int> order;
  for (int node : order_nodes) order.push_back(st.leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(stage, order));
  return s;
}

State fuse_into_consumer(const State& state, int stage, int consumer, const std::vector<int>& spatial_splits, int levels) {
  State s = state;
  const int axes = s.stage(consumer).num_spatial_roots();
  std::vector<std::vector<int>> parts(axes);
  for (int d = 0; d < axes; ++d) {
    if (d >= static_cast<int>(spatial_splits.size()) || spatial_splits[d] < 0) {
      parts[d] = {d};
      continue;
    }
    s.apply(std::make_shared<FollowSplitStep>(consumer, s.stage(consumer).leaf_position(d), spatial_splits[d], levels));
    parts[d] = last_split_outputs(s, consumer);
  }
  std::vector<int> order_nodes;
  int attach_node = -1;
  for (int level = 0; level <= levels; ++level) {
    for (int d = 0; d < axes; ++d) {
      if (level >= static_cast<int>(parts[d].size())) continue;
      order_nodes.push_back(parts[d][level]);
      if (level < levels) attach_node = parts[d][level];
    }
  }
  const Stage& cs = s.stage(consumer);
  std::vector<int> order;
  for (int node : order_nodes) order.push_back(cs.leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(consumer, order));
  if (attach_node < 0) attach_node = order_nodes.front();
  s.apply(std::make_shared<ComputeAtStep>(stage, consumer, s.stage(consumer).leaf_position(attach_node)));
  return s;
}

std::optional<TensorizeChoice> tensorize_choice(const SamplerContext& ctx, const State& state, int stage) {
  if (ctx.gpu || ctx.tensor_intrinsics.empty() || !needs_multi_level_tiling(state, stage)) return std::nullopt;
  const Stage& st = state.stage(stage);
  const Operation& op = *st.op;
  const ReduceNode* red = op.reduction();
  auto* product = red ? red->source->as<BinaryNode>() : nullptr;
  if (!product || red->op != ReduceOp::Sum || red->condition || product->op != BinaryOp::Mul || op.axes.empty()) return std::nullopt;
  auto converted_load = [&](const Expr& e) -> const LoadNode* {
    auto* c = e->as<CastNode>();
    return c && e->dtype == op.dtype ? c->value->as<LoadNode>() : nullptr;
  };
  const LoadNode* a = converted_load(product->a);
  const LoadNode* b = converted_load(product->b);
  if (!a || !b) return std::nullopt;
  const VarNode* n = op.axes.back().var.get();
  const int64_t n_extent = op.axes.back().extent;
  for (const TensorizeOption& option : ctx.tensor_intrinsics) {
    if (option.out != op.dtype || n_extent % option.lanes != 0 || stage_vector_lanes(st, ctx.vector_lanes) % option.lanes != 0) continue;
    for (const auto& [lhs, rhs] : {std::pair{a, b}, std::pair{b, a}}) {
      if (lhs->dtype != option.lhs || rhs->dtype != option.rhs || lhs->indices.empty()) continue;
      auto* k = lhs->indices.back()->as<VarNode>();
      int k_axis = -1;
      for (size_t r = 0; r < red->axes.size(); ++r)
        if (red->axes[r].var.get() == k) k_axis = static_cast<int>(r);
      if (k_axis < 0 || red->axes[k_axis].extent % option.depth != 0) continue;
      bool lhs_reads_n = false, rhs_reads_n = false, rhs_reads_k = false;
      for (const Expr& i : lhs->indices) lhs_reads_n = lhs_reads_n || uses_var(i, n);
      for (const Expr& i : rhs->indices) {
        rhs_reads_n = rhs_reads_n || uses_var(i, n);
        rhs_reads_k = rhs_reads_k || uses_var(i, k);
      }
      const int rhs_stage = state.find_stage(rhs->tensor);
      if (lhs_reads_n || !rhs_reads_n || !rhs_reads_k || rhs_stage < 0 || !state.stage(rhs_stage).is_placeholder() ||
          !state.stage(rhs_stage).op->is_const)
        continue;
      return TensorizeChoice{option, st.num_spatial_roots() + k_axis};
    }
  }
  return std::nullopt;
}

State tensorized_tiling(const State& state, int stage, const TensorizeChoice& choice, std::vector<int>& spatial_splits) {
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  std::vector<std::vector<int>> parts(roots);
  int lanes_node = -1, depth_node = -1;
  spatial_splits.assign(spatial, -1);
  for (int r = 0; r < roots; ++r) {
    parts[r] = {r};
    int node = r;
    if (r == choice.k_root) {
      s.apply(std::make_shared<SplitStep>(stage, s.stage(stage).leaf_position(r), std::vector<int64_t>{choice.option.depth}));
      node = last_split_outputs(s, stage)[0];
      depth_node = last_split_outputs(s, stage)[1];
      parts[r] = {node};
    }
    if (s.stage(stage).iters[node].extent <= 1) continue;
    const int levels = r < spatial ? 4 : 2;
    s.apply(std::make_shared<SplitStep>(stage, s.stage(stage).leaf_position(node), std::vector<int64_t>(levels - 1, 0)));
    parts[r] = last_split_outputs(s, stage);
    if (r < spatial) spatial_splits[r] = static_cast<int>(s.steps().size()) - 1;
    if (r == spatial - 1) {
      s.apply(std::make_shared<SplitStep>(stage, s.stage(stage).leaf_position(parts[r].back()), std::vector<int64_t>{choice.option.lanes}));
      parts[r].back() = last_split_outputs(s, stage)[0];
      lanes_node = last_split_outputs(s, stage)[1];
    }
  }
  if (lanes_node < 0 || depth_node < 0) throw StepError("tensorized tiling: the output axis or the reduction axis is too short");
  std::vector<int> order_nodes;
  int s_level = 0, r_level = 0;
  for (char c : std::string("SSRSRS")) {
    const bool is_spatial = c == 'S';
    const int level = is_spatial ? s_level++ : r_level++;
    for (int r = is_spatial ? 0 : spatial; r < (is_spatial ? spatial : roots); ++r)
      if (level < static_cast<int>(parts[r].size())) order_nodes.push_back(parts[r][level]);
  }
  order_nodes.push_back(lanes_node);
  order_nodes.push_back(depth_node);
  const Stage& st = s.stage(stage);
  std::vector<int> order;
  for (int node : order_nodes) order.push_back(st.leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(stage, order));
  s.apply(std::make_shared<AnnotateStep>(stage, s.stage(stage).leaf_position(lanes_node), IterAnnotation::Tensorize));
  return s;
}

int64_t vector_length(int64_t extent, int64_t max_lanes) {
  int64_t lanes = 1;
  while (lanes * 2 <= max_lanes && extent % (lanes * 2) == 0) lanes *= 2;
  return lanes;
}

int parallelizable_loops(const State& state, int stage) {
  const Stage& st = state.stage(stage);
  int count = 0;
  while (count < static_cast<int>(st.leaves.size()) && st.leaf(count).kind == IterKind::Spatial &&
         st.leaf(count).annotation == IterAnnotation::None)
    ++count;
  if (count == static_cast<int>(st.leaves.size()) && count > 0 && state.has_attached(stage)) --count;
  return count;
}

bool splits_vector_axis(const State& state, const SplitStep& split) {
  const Stage& st = state.stage(split.stage);
  return st.num_spatial_roots() > 0 && split.iter >= 0 && split.iter < static_cast<int>(st.leaves.size()) &&
         st.leaves[split.iter] == st.num_spatial_roots() - 1;
}

int64_t stage_vector_lanes(const Stage& stage, int f32_lanes) { return f32_lanes * 4 / std::max(4, dtype_bytes(stage.op->dtype)); }

bool vectorize_innermost_axis(State& state, int stage, int64_t max_lanes) {
  const Stage& st = state.stage(stage);
  if (st.leaves.empty()) return false;
  int last = static_cast<int>(st.leaves.size()) - 1;
  const Iterator& it = st.leaf(last);
  bool unsplit_axis = st.leaves[last] < st.num_spatial_roots();
  if (!unsplit_axis || it.kind != IterKind::Spatial || it.annotation != IterAnnotation::None || it.extent <= max_lanes) return false;
  int64_t lanes = vector_length(it.extent, max_lanes);
  // A long loop no power of two up to max_lanes divides (a row of 1000 has 8) is split by
  // max_lanes all the same: lowering peels the ragged last vector, and the full vectors do
  // twice the work per instruction.
  if (lanes < max_lanes && it.extent >= kMinRaggedVectorTrips * max_lanes) lanes = max_lanes;
  if (lanes < 2) return false;
  try {
    State next = state;
    next.apply(std::make_shared<SplitStep>(stage, last, std::vector<int64_t>{lanes}));
    next.apply(std::make_shared<AnnotateStep>(stage, last + 1, IterAnnotation::Vectorize));
    state = std::move(next);
    return true;
  } catch (const StepError&) {
    return false;
  }
}

}  // namespace ansor
