// Multi-level tiling, fusion of consumers into tiles, and the analyses the rules share.
#include <fmt/format.h>

#include <algorithm>

#include "dag/access_analysis.h"
#include "ir/arith.h"
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

State multi_level_tiling(const State& state, int stage, const std::string& structure, SpatialSplits& splits) {
  std::vector<int>& spatial_splits = splits.steps;
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  const int s_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'S'));
  const int r_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'R'));
  std::vector<std::vector<int>> parts(roots);
  spatial_splits.assign(spatial, -1);
  splits.presplits.assign(spatial, 0);
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

State fuse_into_consumer(const State& state, int stage, int consumer, const SpatialSplits& splits, int levels) {
  if (!splits.warp_steps.empty()) return fuse_into_warp_tile_consumer(state, stage, consumer, splits);
  State s = state;
  const int axes = s.stage(consumer).num_spatial_roots();
  std::vector<std::vector<int>> parts(axes);
  size_t most_parts = 0;
  for (int d = 0; d < axes; ++d) {
    if (d >= static_cast<int>(splits.steps.size()) || splits.steps[d] < 0) {
      // An axis without tile levels: of extent 1, or only a tile row's rows or lanes, which
      // the tile takes whole (inside the attach loop).
      const bool whole_tile = d < static_cast<int>(splits.presplits.size()) && splits.presplits[d] > 0;
      parts[d] = whole_tile ? std::vector<int>(levels, -1) : std::vector<int>{};
      parts[d].push_back(d);
      most_parts = std::max(most_parts, parts[d].size());
      continue;
    }
    int node = d;
    const int64_t presplit = splits.presplits[d];
    if (presplit > 0) {
      s.apply(std::make_shared<SplitStep>(consumer, s.stage(consumer).leaf_position(d), std::vector<int64_t>{presplit}));
      node = last_split_outputs(s, consumer)[0];
    }
    const int inner = presplit > 0 ? last_split_outputs(s, consumer)[1] : -1;
    s.apply(std::make_shared<FollowSplitStep>(consumer, s.stage(consumer).leaf_position(node), splits.steps[d], levels));
    parts[d] = last_split_outputs(s, consumer);
    if (inner >= 0) parts[d].push_back(inner);
    most_parts = std::max(most_parts, parts[d].size());
  }
  std::vector<int> order_nodes;
  int attach_node = -1;
  for (int level = 0; level < static_cast<int>(std::max<size_t>(most_parts, levels + 1)); ++level) {
    for (int d = 0; d < axes; ++d) {
      if (level >= static_cast<int>(parts[d].size()) || parts[d][level] < 0) continue;
      order_nodes.push_back(parts[d][level]);
      if (level < levels) attach_node = parts[d][level];
    }
  }
  const Stage& cs = s.stage(consumer);
  std::vector<int> order;
  for (int node : order_nodes) order.push_back(cs.leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(consumer, order));
  // The stage is one whole tile (a tile row's rows and lanes, nothing around them): it stays
  // at the root, before its consumer.
  if (attach_node < 0 && std::any_of(parts.begin(), parts.end(), [](const std::vector<int>& p) { return !p.empty() && p.front() < 0; }))
    return s;
  if (attach_node < 0) attach_node = order_nodes.front();
  s.apply(std::make_shared<ComputeAtStep>(stage, consumer, s.stage(consumer).leaf_position(attach_node)));
  return s;
}

namespace {

// The spatial root of `stage` along which lhs's rows lie for a tile row: the innermost spatial
// axis before the output axis that lhs reads, linearly in one index, and rhs does not; -1 where
// none is.
int tile_rows_root(const Stage& st, const LoadNode& lhs, const LoadNode& rhs) {
  for (int r = st.num_spatial_roots() - 2; r >= 0; --r) {
    const VarNode* m = st.op->axes[r].var.get();
    int indices_reading = 0;
    bool linear = true;
    for (const Expr& i : lhs.indices) {
      if (!uses_var(i, m)) continue;
      ++indices_reading;
      linear = linear && linear_coefficient(i, m).has_value();
    }
    bool rhs_reads = false;
    for (const Expr& i : rhs.indices) rhs_reads = rhs_reads || uses_var(i, m);
    if (indices_reading == 1 && linear && !rhs_reads) return r;
  }
  return -1;
}

// Whether stage `producer` can be computed into a buffer inside the tiles of `stage`, its only
// reader: an elementwise stage at the root, untransformed, not a kernel output.
bool computable_in_tile(const State& state, int producer, int stage) {
  const Stage& p = state.stage(producer);
  const std::vector<int> readers = state.readers(producer);
  return !p.is_placeholder() && p.location == ComputeLocation::Root && !p.op->reduction() && untransformed(p) &&
         !state.is_kernel_output(producer) && readers.size() == 1 && readers[0] == stage;
}

}  // namespace

namespace {

// Whether `load` reads along reduction variable k at the end of its tensor: an index that is k
// and a dimension of k's extent, so that the block's shared copy of it (zero past the tensor's
// edge) holds zeros past the reduction's end.
bool ends_with_reduction(const State& state, const LoadNode& load, const IterVar& k) {
  const int stage = state.find_stage(load.tensor);
  if (stage < 0) return false;
  const std::vector<int64_t>& shape = state.stage(stage).op->shape;
  for (size_t d = 0; d < load.indices.size() && d < shape.size(); ++d)
    if (load.indices[d].get() == k.var.get() && shape[d] == k.extent) return true;
  return false;
}

// The warp rows that compute a stage summing lhs · rhs (see tensorize_choices); `tf32`: the
// product's factors are rounded by tf32(), which only TF32 rows take. A reduction that is no
// whole number of the row's steps is taken where both operands end with it: the last step then
// sums zeros from the shared copies past the reduction's end.
std::vector<TensorizeChoice> warp_tile_choices(const SamplerContext& ctx, const State& state, const Stage& st, const ReduceNode& red,
                                               const LoadNode& a, const LoadNode& b, bool tf32) {
  constexpr int64_t kRows = 16, kCols = 8;
  std::vector<TensorizeChoice> out;
  const Operation& op = *st.op;
  const VarNode* n = op.axes.back().var.get();
  for (const TensorizeOption& option : ctx.tensor_intrinsics) {
    if (option.warp_m_tiles == 0 || option.tf32 != tf32 || option.out != op.dtype || op.axes.back().extent < kCols * option.warp_n_tiles)
      continue;
    for (const auto& [lhs, rhs] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
      if (lhs->dtype != option.lhs || rhs->dtype != option.rhs || lhs->indices.empty()) continue;
      auto* k = lhs->indices.back()->as<VarNode>();
      int k_axis = -1;
      for (size_t r = 0; r < red.axes.size(); ++r) {
        const IterVar& axis = red.axes[r];
        if (axis.var.get() != k) continue;
        const bool whole_steps = axis.extent % option.depth == 0;
        const bool zero_past_end = axis.extent > option.depth && ends_with_reduction(state, a, axis) && ends_with_reduction(state, b, axis);
        if (whole_steps || zero_past_end) k_axis = static_cast<int>(r);
      }
      bool lhs_reads_n = false, rhs_reads_n = false, rhs_reads_k = false;
      for (const Expr& i : lhs->indices) lhs_reads_n = lhs_reads_n || uses_var(i, n);
      for (const Expr& i : rhs->indices) {
        rhs_reads_n = rhs_reads_n || uses_var(i, n);
        rhs_reads_k = rhs_reads_k || (k && uses_var(i, k));
      }
      if (k_axis < 0 || lhs_reads_n || !rhs_reads_n || !rhs_reads_k) continue;
      const int m_root = tile_rows_root(st, *lhs, *rhs);
      if (m_root < 0 || op.axes[m_root].extent < kRows * option.warp_m_tiles) continue;
      out.push_back({option, st.num_spatial_roots() + k_axis, m_root, -1});
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<TensorizeChoice> tensorize_choices(const SamplerContext& ctx, const State& state, int stage) {
  std::vector<TensorizeChoice> tiles, dots;
  if (ctx.tensor_intrinsics.empty() || !needs_multi_level_tiling(state, stage)) return {};
  const Stage& st = state.stage(stage);
  const Operation& op = *st.op;
  const ReduceNode* red = op.reduction();
  auto* product = red ? red->source->as<BinaryNode>() : nullptr;
  if (!product || red->op != ReduceOp::Sum || red->condition || product->op != BinaryOp::Mul || op.axes.empty()) return {};
  auto converted_load = [&](const Expr& e) -> const LoadNode* {
    auto* c = e->as<CastNode>();
    return c && e->dtype == op.dtype ? c->value->as<LoadNode>() : nullptr;
  };
  // f32 loads rounded by tf32(): TF32 tensor cores, on GPUs.
  auto tf32_load = [&](const Expr& e) -> const LoadNode* {
    auto* c = e->as<CallNode>();
    return c && c->fn == MathFn::Tf32 && e->dtype == DType::F32 && op.dtype == DType::F32 ? c->args[0]->as<LoadNode>() : nullptr;
  };
  if (ctx.gpu && tf32_load(product->a) && tf32_load(product->b))
    return warp_tile_choices(ctx, state, st, *red, *tf32_load(product->a), *tf32_load(product->b), true);
  const LoadNode* a = converted_load(product->a);
  const LoadNode* b = converted_load(product->b);
  if (!a || !b) return {};
  if (ctx.gpu) return warp_tile_choices(ctx, state, st, *red, *a, *b, false);
  const VarNode* n = op.axes.back().var.get();
  const int64_t n_extent = op.axes.back().extent;
  for (const TensorizeOption& option : ctx.tensor_intrinsics) {
    const bool tile = option.rows > 0;
    // Ragged outputs cost nothing to pad: the packed weights are zero past them, and the
    // outputs past them land in the tile's local buffer (or are guarded, and computed without
    // the instruction). A tile row's sum is whole tile rows (docs/tensor_intrinsics.md).
    if (option.out != op.dtype || n_extent < option.lanes) continue;
    if (!tile && (!dots.empty() || stage_vector_lanes(st, ctx.vector_lanes) % option.lanes != 0)) continue;
    const int64_t k_step = tile ? 16 * option.depth : option.depth;
    for (const auto& [lhs, rhs] : {std::pair{a, b}, std::pair{b, a}}) {
      if (lhs->dtype != option.lhs || rhs->dtype != option.rhs || lhs->indices.empty()) continue;
      auto* k = lhs->indices.back()->as<VarNode>();
      int k_axis = -1;
      for (size_t r = 0; r < red->axes.size(); ++r)
        if (red->axes[r].var.get() == k) k_axis = static_cast<int>(r);
      if (k_axis < 0 || red->axes[k_axis].extent < k_step || (tile && red->axes[k_axis].extent % k_step != 0)) continue;
      bool lhs_reads_n = false, rhs_reads_n = false, rhs_reads_k = false;
      for (const Expr& i : lhs->indices) lhs_reads_n = lhs_reads_n || uses_var(i, n);
      for (const Expr& i : rhs->indices) {
        rhs_reads_n = rhs_reads_n || uses_var(i, n);
        rhs_reads_k = rhs_reads_k || uses_var(i, k);
      }
      const int rhs_stage = state.find_stage(rhs->tensor);
      if (lhs_reads_n || !rhs_reads_n || !rhs_reads_k || rhs_stage < 0 || !state.stage(rhs_stage).is_placeholder()) continue;
      TensorizeChoice choice{option, st.num_spatial_roots() + k_axis};
      if (tile) {
        // The tile's rows are lhs rows in memory: lhs is read as it is stored, an input or a
        // stage computed into a buffer inside the tile (a padding: inlined, its selects would
        // vary along the rows).
        const int lhs_stage = state.find_stage(lhs->tensor);
        const bool lhs_input = lhs_stage >= 0 && state.stage(lhs_stage).is_placeholder();
        const bool lhs_in_tile = lhs_stage >= 0 && computable_in_tile(state, lhs_stage, stage);
        choice.m_root = lhs_input || lhs_in_tile ? tile_rows_root(st, *lhs, *rhs) : -1;
        if (choice.m_root < 0 || op.axes[choice.m_root].extent % option.rows != 0) continue;
        choice.lhs_producer = lhs_in_tile ? lhs_stage : -1;
        tiles.push_back(choice);
      } else {
        dots.push_back(choice);
      }
      break;
    }
  }
  // Tiles of the most rows that divide the stage's rows, and of those the counts of tiles; the
  // options come largest tile first (the backend's order), and the sketches of the largest come
  // last, where the default schedule takes its sketch.
  int64_t most_rows = 0;
  for (const TensorizeChoice& c : tiles) most_rows = std::max(most_rows, c.option.tile_rows);
  tiles.erase(std::remove_if(tiles.begin(), tiles.end(), [&](const TensorizeChoice& c) { return c.option.tile_rows != most_rows; }),
              tiles.end());
  std::reverse(tiles.begin(), tiles.end());
  return tiles.empty() ? dots : tiles;
}

bool is_tensorized_rhs(const State& state, int input) {
  const std::vector<int> consumers = state.consumers(input);
  if (!state.stage(input).is_placeholder() || consumers.size() != 1) return false;
  const Stage& c = state.stage(consumers[0]);
  const bool tensorized =
      std::any_of(c.leaves.begin(), c.leaves.end(), [&](int node) { return c.iters[node].annotation == IterAnnotation::Tensorize; });
  if (!tensorized || c.op->axes.empty()) return false;
  const VarNode* lanes = c.op->axes.back().var.get();
  for (const LoadNode* l : collect_loads(c.op->body)) {
    if (l->tensor != state.stage(input).op->name) continue;
    for (const Expr& i : l->indices)
      if (uses_var(i, lanes)) return true;
  }
  return false;
}

namespace {

// The tiling of a tile row: see tensorized_tiling.
State tile_row_tiling(const State& state, int stage, const TensorizeChoice& choice, SpatialSplits& splits) {
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  const TensorizeOption& option = choice.option;
  std::vector<std::vector<int>> parts(roots);
  int rows_node = -1, lanes_node = -1, k_rows_node = -1, depth_node = -1;
  splits.steps.assign(spatial, -1);
  splits.presplits.assign(spatial, 0);
  auto split = [&](int node, std::vector<int64_t> lengths) {
    s.apply(std::make_shared<SplitStep>(stage, s.stage(stage).leaf_position(node), std::move(lengths)));
    return last_split_outputs(s, stage);
  };
  for (int r = 0; r < roots; ++r) {
    int node = r;
    if (r == choice.m_root || r == spatial - 1) {
      const int64_t inner = r == choice.m_root ? option.rows : option.lanes;
      const std::vector<int> outputs = split(r, {inner});
      node = outputs[0];
      (r == choice.m_root ? rows_node : lanes_node) = outputs[1];
      splits.presplits[r] = inner;
    } else if (r == choice.k_root) {
      const std::vector<int> outputs = split(r, {16 * option.depth});
      node = outputs[0];
      const std::vector<int> row = split(outputs[1], {option.depth});
      k_rows_node = row[0];
      depth_node = row[1];
    }
    parts[r] = {node};
    if (s.stage(stage).iters[node].extent <= 1) continue;
    const int levels = r < spatial ? 3 : 2;
    parts[r] = split(node, std::vector<int64_t>(levels - 1, 0));
    if (r < spatial) splits.steps[r] = static_cast<int>(s.steps().size()) - 1;
  }
  // The steps of k, the inner part of its tiling, belong to the nest: the other reductions'
  // second level comes before it.
  const int steps_node = parts[choice.k_root].back();
  parts[choice.k_root].pop_back();
  std::vector<int> order_nodes;
  int s_level = 0, r_level = 0;
  std::vector<int> outer_spatial_roots;  // of the loops of the first two levels, which come first
  for (char c : std::string("SSRSR")) {
    const bool is_spatial = c == 'S';
    const int level = is_spatial ? s_level++ : r_level++;
    for (int r = is_spatial ? 0 : spatial; r < (is_spatial ? spatial : roots); ++r) {
      if (level >= static_cast<int>(parts[r].size())) continue;
      order_nodes.push_back(parts[r][level]);
      if (is_spatial && level < 2) outer_spatial_roots.push_back(r);
    }
  }
  for (int node : {steps_node, rows_node, k_rows_node, lanes_node, depth_node}) order_nodes.push_back(node);
  const Stage& st = s.stage(stage);
  std::vector<int> order;
  for (int node : order_nodes) order.push_back(st.leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(stage, order));
  s.apply(std::make_shared<AnnotateStep>(stage, s.stage(stage).leaf_position(steps_node), IterAnnotation::Tensorize));
  if (choice.lhs_producer >= 0) {
    // lhs (a convolution's padded input) is computed per tile of the two outer spatial levels,
    // inside the last of their loops along which it varies: its tile (the output's rows and
    // pixels with the taps' halo, every channel) is then reused by the reduction's loops and by
    // the output channels' loops inside it.
    const Operation& op = *s.stage(stage).op;
    auto lhs_reads = [&](int root) {
      for (const LoadNode* l : collect_loads(op.body))
        if (l->tensor == s.stage(choice.lhs_producer).op->name)
          for (const Expr& i : l->indices)
            if (uses_var(i, op.axes[root].var.get())) return true;
      return false;
    };
    int attach = -1;
    for (int p = 0; p < static_cast<int>(outer_spatial_roots.size()); ++p)
      if (lhs_reads(outer_spatial_roots[p])) attach = p;
    if (attach >= 0) s.apply(std::make_shared<ComputeAtStep>(choice.lhs_producer, stage, attach));
  }
  return s;
}

}  // namespace

State tensorized_tiling(const State& state, int stage, const TensorizeChoice& choice, SpatialSplits& splits) {
  if (choice.option.warp_m_tiles > 0) return warp_tile_tiling(state, stage, choice, splits);
  if (choice.option.rows > 0) return tile_row_tiling(state, stage, choice, splits);
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  std::vector<std::vector<int>> parts(roots);
  int lanes_node = -1, depth_node = -1;
  std::vector<int>& spatial_splits = splits.steps;
  spatial_splits.assign(spatial, -1);
  splits.presplits.assign(spatial, 0);
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
  // A stage computed inside this one by tile rows (its `tensorize` loop is the steps of a
  // reduction, tensorized_tiling) needs its whole tile: the loops inside its attach loop stay out.
  for (const Stage& attached : state.stages()) {
    if (attached.location != ComputeLocation::At || attached.attach_stage != stage) continue;
    const bool tile_rows = std::any_of(attached.leaves.begin(), attached.leaves.end(), [&](int node) {
      return attached.iters[node].annotation == IterAnnotation::Tensorize && attached.iters[node].kind == IterKind::Reduce;
    });
    if (tile_rows) count = std::min(count, st.leaf_position(attached.attach_iter) + 1);
  }
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
