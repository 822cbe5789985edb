// Thread binding of GPU programs.
#include "sampler/gpu_binding.h"

#include <algorithm>

#include "sampler/program_builder.h"
#include "schedule/bound_inference.h"
#include "schedule/steps.h"

namespace ansor {

int cross_thread_reduction_loop(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (st.is_placeholder() || st.location != ComputeLocation::Root || !st.op->reduction() || st.leaves.empty()) return -1;
  const int last = static_cast<int>(st.leaves.size()) - 1;
  for (int p = 0; p < last; ++p)
    if (st.leaf(p).kind != IterKind::Spatial) return -1;
  if (st.leaf(last).kind != IterKind::Reduce) return -1;
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& other = s.stage(i);
    if (other.location == ComputeLocation::At && other.attach_stage == stage && other.attach_iter == st.leaves[last]) return last;
  }
  return -1;
}

bool is_cross_thread_split(const std::vector<StepPtr>& steps, size_t k) {
  auto* split = dynamic_cast<const SplitStep*>(steps[k].get());
  auto* rfactor = k + 1 < steps.size() ? dynamic_cast<const RfactorStep*>(steps[k + 1].get()) : nullptr;
  return split && rfactor && rfactor->stage == split->stage && split->lengths.size() == 1 && rfactor->iter == split->iter + 1;
}

namespace {

std::vector<int> first_loops(int count) {
  std::vector<int> loops(count);
  for (int p = 0; p < count; ++p) loops[p] = p;
  return loops;
}

// A shared-memory copy computed inside a block, spread over that block's threads, each loading
// a vector of consecutive elements.
void bind_cooperative_fetch(State& s, int i, const GpuBindingChoices& choices) {
  // The copy's extent is the region its consumers' threads read, known once they are bound.
  infer_bounds(s);
  const Stage& st = s.stage(i);
  // Read before the fuse below, which replaces the stage `st` refers to.
  int64_t threads = threads_around(s, i, -1);
  const int loops = static_cast<int>(st.leaves.size());
  int64_t extent = 1;
  for (int p = 0; p < loops; ++p) extent *= std::max<int64_t>(1, st.leaf(p).extent);
  if (threads <= 0) threads = choices.threads_for(extent);
  // The choice is of 4-byte lanes: narrower elements move the same bytes in more lanes.
  const int64_t lanes = choices.fetch_lanes_for(extent, threads) * std::max(1, kFetchLaneBytes / dtype_bytes(st.op->dtype));
  if (loops > 1 && !s.try_apply(std::make_shared<FuseStep>(i, first_loops(loops)))) return;
  std::vector<int64_t> lengths = {threads};
  if (lanes > 1) lengths.push_back(lanes);
  if (!s.try_apply(std::make_shared<SplitStep>(i, 0, lengths))) return;
  s.try_apply(std::make_shared<AnnotateStep>(i, 1, IterAnnotation::ThreadX));
  if (lanes > 1) s.try_apply(std::make_shared<AnnotateStep>(i, 2, IterAnnotation::Vectorize));
}

// The stage's spatial loops fused on blocks, its reduction loop (position `across`) on threads.
void bind_cross_thread_reduction(State& s, int i, int across) {
  if (across > 1 && !s.try_apply(std::make_shared<FuseStep>(i, first_loops(across)))) return;
  if (across > 0) s.try_apply(std::make_shared<AnnotateStep>(i, 0, IterAnnotation::BlockX));
  s.try_apply(std::make_shared<AnnotateStep>(i, across > 0 ? 1 : 0, IterAnnotation::ThreadX));
}

// Whether stage i is a warp tile of tensor cores (warp_tile_tiling), or a consumer with one
// computed inside it: its thread level also has the lanes' loops g and t.
bool has_warp_tile(const State& s, int i) {
  auto tensorized = [](const Stage& st) {
    return std::any_of(st.leaves.begin(), st.leaves.end(), [&](int leaf) { return st.iters[leaf].annotation == IterAnnotation::Tensorize; });
  };
  if (tensorized(s.stage(i))) return true;
  for (const Stage& other : s.stages())
    if (other.location == ComputeLocation::At && other.attach_stage == i && tensorized(other)) return true;
  return false;
}

// A tiled stage (or one following a tiling): the first spatial level runs on blocks, the
// second on virtual threads, the third on threads (SSSRRSRS), a warp tile's lanes with them.
void bind_tile_levels(State& s, int i, int axes, int split_axes) {
  constexpr int kLaneLoops = 2;
  const int groups[3] = {axes, split_axes, split_axes + (has_warp_tile(s, i) ? kLaneLoops : 0)};
  const IterAnnotation bindings[3] = {IterAnnotation::BlockX, IterAnnotation::VThread, IterAnnotation::ThreadX};
  int position = 0;
  for (int g = 0; g < 3 && groups[g] > 0; ++g) {
    std::vector<int> loops(groups[g]);
    for (int p = 0; p < groups[g]; ++p) loops[p] = position + p;
    if (groups[g] > 1 && !s.try_apply(std::make_shared<FuseStep>(i, loops))) return;
    if (!s.try_apply(std::make_shared<AnnotateStep>(i, position, bindings[g]))) return;
    ++position;
  }
}

}  // namespace

void bind_gpu_threads(State& s, const GpuBindingChoices& choices) {
  // Consumers first: a shared-memory copy is spread over the threads its consumer runs on.
  for (int i = s.num_stages() - 1; i >= 0; --i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined) continue;
    // Bound by its sketch already (a row-block fusion).
    if (std::any_of(st.leaves.begin(), st.leaves.end(), [&](int leaf) {
          IterAnnotation a = st.iters[leaf].annotation;
          return is_thread_binding(a) || is_block_index(a);
        }))
      continue;
    if (int across = cross_thread_reduction_loop(s, i); across >= 0) {
      bind_cross_thread_reduction(s, i, across);
      continue;
    }
    int spatial = 0;
    while (spatial < static_cast<int>(st.leaves.size()) && st.leaf(spatial).kind == IterKind::Spatial) ++spatial;
    if (spatial == 0) continue;
    if (st.location == ComputeLocation::At) {
      if (st.scope == MemoryScope::Shared) bind_cooperative_fetch(s, i, choices);
      continue;
    }
    const int axes = st.num_spatial_roots();
    int split_axes = 0;
    for (const IterRelation& rel : st.relations)
      if (rel.kind == IterRelation::Kind::Split && rel.inputs[0] < axes) ++split_axes;
    if (split_axes > 0) {
      bind_tile_levels(s, i, axes, split_axes);
      continue;
    }
    int64_t extent = 1;
    for (int p = 0; p < spatial; ++p) extent *= std::max<int64_t>(1, st.leaf(p).extent);
    if (spatial > 1 && !s.try_apply(std::make_shared<FuseStep>(i, first_loops(spatial)))) continue;
    if (s.try_apply(std::make_shared<SplitStep>(i, 0, std::vector<int64_t>{choices.threads_for(extent)}))) {
      s.try_apply(std::make_shared<AnnotateStep>(i, 0, IterAnnotation::BlockX));
      s.try_apply(std::make_shared<AnnotateStep>(i, 1, IterAnnotation::ThreadX));
    }
  }
}

}  // namespace ansor
