// The tiling of a GPU stage computed by a tensor-core warp row, and the fusion of its consumer
// into the lanes' tiles.
#include <algorithm>

#include "sampler/sketch_rule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

// A warp row's instruction tile (its depth is the option's), and the rows and columns each lane
// takes of it.
constexpr int64_t kMmaRows = 16, kMmaCols = 8, kLaneRows = 2, kLaneCols = 2;

std::vector<int> split_outputs(State& s, int stage, int node, std::vector<int64_t> lengths) {
  s.apply(std::make_shared<SplitStep>(stage, s.stage(stage).leaf_position(node), std::move(lengths)));
  return s.stage(stage).relations.back().outputs;
}

void reorder(State& s, int stage, const std::vector<int>& nodes) {
  std::vector<int> order;
  for (int node : nodes) order.push_back(s.stage(stage).leaf_position(node));
  s.apply(std::make_shared<ReorderStep>(stage, order));
}

// The loops of one spatial axis of a warp tile, by role.
struct AxisLoops {
  std::vector<int> levels;  // block, virtual thread, warp (one loop for an axis not split)
  int lane = -1;            // g (rows) or t (columns)
  std::vector<int> nest;    // [mi,] h or [nj,] c
};

// Splits a warp tile's axis `root` by `tiles` instruction tiles of `size` (rows or columns), of
// which each lane takes `per_lane`: [outer levels..., lane, tile count, per lane].
AxisLoops split_warp_axis(State& s, int stage, int root, int64_t size, int64_t tiles, int64_t per_lane, int& warp_step, int& lane_step,
                          int& outer_step) {
  AxisLoops loops;
  std::vector<int> parts = split_outputs(s, stage, root, {size * tiles});
  warp_step = static_cast<int>(s.steps().size()) - 1;
  const int outer = parts[0], inner = parts[1];
  const std::vector<int> lane_parts = split_outputs(s, stage, inner, tiles > 1 ? std::vector<int64_t>{tiles, per_lane} : std::vector<int64_t>{per_lane});
  lane_step = static_cast<int>(s.steps().size()) - 1;
  loops.lane = lane_parts[0];
  loops.nest.assign(lane_parts.begin() + 1, lane_parts.end());
  // Split even where the outer part is one tile, so that every warp tile has the same levels
  // (the thread binding counts them).
  loops.levels = split_outputs(s, stage, outer, {0, 0});
  outer_step = static_cast<int>(s.steps().size()) - 1;
  return loops;
}

}  // namespace

State warp_tile_tiling(const State& state, int stage, const TensorizeChoice& choice, SpatialSplits& splits) {
  State s = state;
  const int spatial = s.stage(stage).num_spatial_roots(), roots = s.stage(stage).num_roots;
  const TensorizeOption& option = choice.option;
  const int n_root = spatial - 1;
  splits.steps.assign(spatial, -1);
  splits.presplits.assign(spatial, 0);
  splits.warp_steps.assign(spatial, -1);
  splits.lane_steps.assign(spatial, -1);
  std::vector<AxisLoops> axes(spatial);
  std::vector<std::vector<int>> reduce_levels(roots - spatial);
  int steps_node = -1;
  for (int r = 0; r < roots; ++r) {
    if (r == choice.m_root || r == n_root) {
      const bool rows = r == choice.m_root;
      axes[r] = split_warp_axis(s, stage, r, rows ? kMmaRows : kMmaCols, rows ? option.warp_m_tiles : option.warp_n_tiles,
                                rows ? kLaneRows : kLaneCols, splits.warp_steps[r], splits.lane_steps[r], splits.steps[r]);
    } else if (r < spatial) {
      axes[r].levels = {r};
      if (s.stage(stage).iters[r].extent <= 1) continue;
      axes[r].levels = split_outputs(s, stage, r, {0, 0});
      splits.steps[r] = static_cast<int>(s.steps().size()) - 1;
    } else {
      int node = r;
      if (r == choice.k_root) {
        const std::vector<int> parts = split_outputs(s, stage, r, {option.depth});
        node = parts[0];
        steps_node = parts[1];
      }
      reduce_levels[r - spatial] = s.stage(stage).iters[node].extent > 1 ? split_outputs(s, stage, node, {0}) : std::vector<int>{node};
    }
  }
  std::vector<int> order;
  for (size_t level = 0; level < 3; ++level)
    for (const AxisLoops& a : axes)
      if (level < a.levels.size()) order.push_back(a.levels[level]);
  order.push_back(axes[choice.m_root].lane);
  order.push_back(axes[n_root].lane);
  for (size_t level = 0; level < 2; ++level)
    for (const std::vector<int>& r : reduce_levels)
      if (level < r.size()) order.push_back(r[level]);
  order.push_back(steps_node);
  for (int axis : {choice.m_root, n_root})
    for (int node : axes[axis].nest) order.push_back(node);
  reorder(s, stage, order);
  s.apply(std::make_shared<AnnotateStep>(stage, s.stage(stage).leaf_position(steps_node), IterAnnotation::Tensorize));
  return s;
}

State fuse_into_warp_tile_consumer(const State& state, int stage, int consumer, const SpatialSplits& splits) {
  State s = state;
  const int axes = s.stage(consumer).num_spatial_roots();
  std::vector<AxisLoops> loops(axes);
  auto follow = [&](int node, int step) {
    const int lengths = static_cast<int>(static_cast<const SplitStep&>(*s.steps()[step]).lengths.size());
    s.apply(std::make_shared<FollowSplitStep>(consumer, s.stage(consumer).leaf_position(node), step, lengths));
    return s.stage(consumer).relations.back().outputs;
  };
  for (int d = 0; d < axes; ++d) {
    loops[d].levels = {d};
    if (splits.warp_steps[d] >= 0) {
      const std::vector<int> parts = follow(d, splits.warp_steps[d]);
      const std::vector<int> lane_parts = follow(parts[1], splits.lane_steps[d]);
      loops[d].lane = lane_parts[0];
      loops[d].nest.assign(lane_parts.begin() + 1, lane_parts.end());
      loops[d].levels = follow(parts[0], splits.steps[d]);
    } else if (splits.steps[d] >= 0) {
      loops[d].levels = follow(d, splits.steps[d]);
    }
  }
  std::vector<int> order, lanes, nest;
  for (size_t level = 0; level < 3; ++level)
    for (const AxisLoops& a : loops)
      if (level < a.levels.size()) order.push_back(a.levels[level]);
  for (const AxisLoops& a : loops) {
    if (a.lane >= 0) lanes.push_back(a.lane);
    nest.insert(nest.end(), a.nest.begin(), a.nest.end());
  }
  order.insert(order.end(), lanes.begin(), lanes.end());
  order.insert(order.end(), nest.begin(), nest.end());
  reorder(s, consumer, order);
  s.apply(std::make_shared<ComputeAtStep>(stage, consumer, s.stage(consumer).leaf_position(lanes.back())));
  return s;
}

}  // namespace ansor
