// Derivation rules of sketches (paper §4.1, Table 1). Sketch generation visits the stages from
// the output back to the inputs; at each stage it asks every rule, in order, whether it
// applies. A rule that applies turns the state into one or more successors, each with the
// stage to continue from; a rule may also stop the rules after it from being asked.
//
// Rules live in a SketchRules list, which users of the generator library can extend with rules
// of their own (the paper's customisation).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sampler/sampler_context.h"
#include "schedule/state.h"
#include "schedule/steps.h"

namespace ansor {

class SketchRule {
 public:
  enum class Condition { Pass, Apply, ApplyAndSkipRest };

  virtual ~SketchRule() = default;
  virtual std::string name() const = 0;
  virtual Condition check(const SamplerContext& ctx, const State& state, int stage) const = 0;
  // The successors of `state`, each with the stage the derivation continues from.
  virtual std::vector<std::pair<State, int>> apply(const SamplerContext& ctx, const State& state, int stage) const = 0;
};

using SketchRulePtr = std::shared_ptr<const SketchRule>;

class SketchRules {
 public:
  // The rules of Table 1 for CPUs: always-inline, vector rfactor of an innermost reduction,
  // rfactor, fusion into a consumer's rows, cache write, multi-level tiling with fusion,
  // multi-level tiling, skip.
  static SketchRules cpu();
  // The GPU rules: always-inline, cross-thread reduction, cache write, shared-memory cache
  // reads, SSSRRSRS tiling with fusion, tiling, skip.
  static SketchRules gpu();
  static SketchRules for_context(const SamplerContext& ctx) { return ctx.gpu ? gpu() : cpu(); }

  // Adds a rule before the rule at `position` (end by default).
  void add(SketchRulePtr rule, size_t position = static_cast<size_t>(-1));
  const std::vector<SketchRulePtr>& rules() const { return rules_; }

 private:
  std::vector<SketchRulePtr> rules_;
};

// ---- Helpers the rules share (also useful to custom rules) ----

// The single consumer of the stage, when the stage's value reaches it through elementwise
// accesses only (through inlined stages too): it can be computed inside the stage's tiles.
// -1 otherwise.
int fusible_consumer(const State& state, int stage);

// Whether the stage is a tiling candidate: a reduction whose reads leave enough spatial axes
// unused to give data reuse.
bool needs_multi_level_tiling(const State& state, int stage);

// Per spatial axis of a tiled stage, the split step of its tile levels (-1: none) and the fixed
// factor it was split by before those levels (0: none), which a consumer fused into the tile
// repeats.
struct SpatialSplits {
  std::vector<int> steps;
  std::vector<int64_t> presplits;
  // A warp tile's (GPU tensor cores, warp_tile_tiling): per spatial axis, the step of its fixed
  // split by the warp's rows or columns and the step of their split among the lanes (-1: none);
  // empty for other tilings.
  std::vector<int> warp_steps, lane_steps;
};

// Splits every spatial loop into as many parts as there are `S` in `structure` and every
// reduction loop into as many as there are `R`, lengths undecided, and orders the parts as the
// structure says (e.g. "SSRSRS"). The split step of each spatial axis (or -1 when its extent is
// 1) is returned through splits.
State multi_level_tiling(const State& state, int stage, const std::string& structure, SpatialSplits& splits);

// How a tiling candidate's tiles are computed by a tensor intrinsic of the target: its
// reduction sums products of two loads converted to its type, lhs * rhs in the option's types
// (either order), with lhs contiguous along reduction axis `k` (its last index is k) and not
// reading the innermost output axis, and rhs an input that reads both (packed by layout rewrite
// into the intrinsic's layout: a const one by the caller, another by the kernel on each call);
// the innermost output axis and k hold at least one call (ragged edges are padded). A tile row
// (AMX) also takes `rows` of lhs along the spatial axis `m`: lhs an input that reads it, or an
// elementwise stage read only here (a padding), which the tiling computes inside the tile; rhs
// does not read m; its extent, the output axis and k are whole multiples of the rows, lanes and
// tile rows, and of the row counts per tile that do, only the most are offered.
struct TensorizeChoice {
  TensorizeOption option;
  int k_root = -1;        // the stage's root iterator of axis k
  int m_root = -1;        // of the tile's rows (tile rows and warp rows)
  int lhs_producer = -1;  // the stage lhs reads, computed inside the tile (tile rows only)
};
// Every tile row that computes the stage where one does (each a sketch: the search weighs their
// tile counts; the largest tile last), else the first dot-product row that does; empty where
// none does. On a GPU, every warp row (tensor cores) that computes it: lhs reads the rows along
// `m` as a tile row's does (an input or a shared-memory copy of one), rhs reads k and the
// output axis, m and the output axis hold at least one warp's rows and columns (their edges may
// be ragged), and k is a whole number of the row's steps (16, or 8 for TF32, whose factors are
// f32 loads rounded by tf32()).
std::vector<TensorizeChoice> tensorize_choices(const SamplerContext& ctx, const State& state, int stage);

// Whether input stage `input` is the rhs of a tensorized stage, read along its innermost
// output axis (the intrinsic's lanes): layout rewrite then packs it, also where it is not const.
bool is_tensorized_rhs(const State& state, int input);

// multi_level_tiling's SSRSRS for a stage `choice` computes by an intrinsic: k is first split by
// the intrinsic's depth, its outer part tiled in two levels, every other reduction axis too, and
// the spatial axes in four; the innermost output axis's last level (whole vectors, as tile sizes
// of a vector axis are drawn) is split by the intrinsic's lanes. The lanes and the depth come
// last, the lanes annotated `tensorize`. For a tile row, m and the output axis are first split by
// the call's rows and lanes, their outer parts tiled in three levels, and k by the tile row's
// 16 × depth (then 16 and depth), its outer part in two levels, the inner one the call's steps:
// the nest (steps, rows, 16, lanes, depth) comes last, its steps annotated `tensorize`; a
// choice's lhs_producer is computed at the last loop of the two outer spatial levels that lhs
// varies along.
State tensorized_tiling(const State& state, int stage, const TensorizeChoice& choice, SpatialSplits& splits);

// A GPU's warp tile (a warp row's choice): the output axis n and the rows' axis m are split by
// the warp's columns and rows (n: [outer, t: 4, nj, c: 2], m: [outer, g: 8, mi, h: 2], the tile
// counts' loops left out where they are 1), their outer parts and every other spatial axis in
// three levels (block, virtual thread, warp), k by the row's depth (16, or 8 for TF32) and its
// outer part, as every other reduction axis, in two. The order: the three spatial levels, g and
// t after the warps (lane 4g + t of the fused thread loop), the reductions' two levels, then
// the lane's nest (the depth's steps of k, mi, h, nj, c), its first loop annotated `tensorize`.
State warp_tile_tiling(const State& state, int stage, const TensorizeChoice& choice, SpatialSplits& splits);

// Tiles `consumer` like the first `levels` spatial levels of a stage tiled by
// multi_level_tiling (or tensorized_tiling) and computes the stage inside the consumer's last
// loop of those levels. For a warp tile (splits.warp_steps), the consumer repeats all of its
// splits, and the stage is computed inside the lanes' loops g and t: each lane's sums.
State fuse_into_consumer(const State& state, int stage, int consumer, const SpatialSplits& splits, int levels);
State fuse_into_warp_tile_consumer(const State& state, int stage, int consumer, const SpatialSplits& splits);

// The lanes of a vector loop over `extent` iterations: the largest power of two that divides
// the extent, at most max_lanes (1 for an odd extent). Vector loops of powers of two are legal
// (lower/loop_passes.h), and dividing the extent leaves no ragged tail.
int64_t vector_length(int64_t extent, int64_t max_lanes);

inline constexpr int64_t kMinRaggedVectorTrips = 4;

// How many of a stage's leading loops may be fused into its parallel loop: spatial and not
// annotated, and never all of them when other stages are computed inside the stage: fusing its
// innermost loop too would compute those stages once per element, their tiles (a register tile
// of accumulators, a tensorized tile) reduced to one element. A stage computed by tile rows
// inside it keeps every loop inside its attach loop out: AMX's tile needs all of its rows.
int parallelizable_loops(const State& state, int stage);

// Whether `split`, about to be applied to `state`, splits its stage's innermost data axis (the
// last axis of the operation, contiguous in its output): the loop the stage's vectors run along.
bool splits_vector_axis(const State& state, const SplitStep& split);

// The elements of one vector of the target for a stage's values: the context's f32 lanes,
// fewer for wider types.
int64_t stage_vector_lanes(const Stage& stage, int f32_lanes);

// Splits the stage's innermost loop, when it is an unsplit spatial axis longer than a vector,
// by vector_length(extent, max_lanes) and vectorises the inner part; a loop of at least
// kMinRaggedVectorTrips vectors that no power of two up to max_lanes divides is split by
// max_lanes with a ragged tail, which lowering peels. Bounds must be inferred. Returns whether
// it did.
bool vectorize_innermost_axis(State& state, int stage, int64_t max_lanes);

}  // namespace ansor
