// The mutations: each finds what it may change in the step list, changes one thing at random
// and rebuilds the program.
#include "sampler/mutation.h"

#include <algorithm>

#include "sampler/gpu_binding.h"
#include "sampler/program_builder.h"
#include "sampler/random_choice.h"
#include "sampler/sketch_rule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

template <class T>
std::vector<T> shuffled(std::vector<T> xs, std::mt19937_64& rng) {
  std::shuffle(xs.begin(), xs.end(), rng);
  return xs;
}

std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 2; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Whether moving `factor` out of level `from` keeps an innermost length (level n) of whole
// vectors whole: only a move out of the innermost level can break it.
bool keeps_whole_vectors(int64_t innermost, int from, int n, int64_t factor, int64_t lanes) {
  return lanes <= 1 || innermost % lanes != 0 || from != n || (innermost / factor) % lanes == 0;
}

// A factor moved between two levels of a split: level 0 is the outer part, level i > 0 the
// i-th length.
struct TileMove {
  int from, to;
  int64_t factor;
};

// Every move that keeps the product of the levels and the innermost length within
// max_innermost. The outer part takes part only when the lengths divide the extent exactly: of
// a ragged split only the lengths are exchanged. Along a vector axis (lanes > 1) an innermost
// length of whole vectors stays whole vectors.
std::vector<TileMove> tile_moves(int64_t extent, const std::vector<int64_t>& lengths, int64_t max_innermost, int64_t lanes) {
  const int n = static_cast<int>(lengths.size());
  int64_t product = 1;
  for (int64_t l : lengths) product = l > 0 ? product * l : 0;
  if (product == 0) return {};
  const bool exact = extent > 0 && extent % product == 0;
  std::vector<int64_t> levels = {exact ? extent / product : 1};
  levels.insert(levels.end(), lengths.begin(), lengths.end());
  std::vector<TileMove> moves;
  for (int from = exact ? 0 : 1; from <= n; ++from)
    for (int64_t d : divisors_above_one(levels[from]))
      for (int to = exact ? 0 : 1; to <= n; ++to)
        if (to != from && (to != n || levels[n] * d <= max_innermost) && keeps_whole_vectors(levels[n], from, n, d, lanes))
          moves.push_back({from, to, d});
  return moves;
}

// An annotate(stage, 0, parallel), and the fuse of the stage's leading loops before it if any.
struct ParallelSite {
  int stage;
  size_t first;     // the fuse, or the annotation when there is no fuse
  size_t annotate;  // the annotation
  int fused;        // loops in the parallel loop
};

std::vector<ParallelSite> parallel_sites(const std::vector<StepPtr>& steps, size_t from) {
  std::vector<ParallelSite> sites;
  for (size_t a = from; a < steps.size(); ++a) {
    auto* annotate = dynamic_cast<const AnnotateStep*>(steps[a].get());
    if (!annotate || annotate->annotation != IterAnnotation::Parallel || annotate->iter != 0) continue;
    ParallelSite site{annotate->stage, a, a, 1};
    if (a > from) {
      auto* fuse = dynamic_cast<const FuseStep*>(steps[a - 1].get());
      bool leading = fuse && fuse->stage == annotate->stage && fuse->iters.size() > 1;
      for (size_t p = 0; leading && p < fuse->iters.size(); ++p) leading = fuse->iters[p] == static_cast<int>(p);
      if (leading) site = {annotate->stage, a - 1, a, static_cast<int>(fuse->iters.size())};
    }
    sites.push_back(site);
  }
  return sites;
}

// The parallel site of one stage from position `from` on, if any.
std::optional<ParallelSite> parallel_site_of(const std::vector<StepPtr>& steps, size_t from, int stage) {
  for (const ParallelSite& site : parallel_sites(steps, from))
    if (site.stage == stage) return site;
  return std::nullopt;
}

// The steps with the site's parallel loop made of `count` leading loops (0: no parallel loop);
// the stage's later steps renumber its loops. Nothing when a later step names a loop that the
// new fuse swallows.
std::optional<std::vector<StepPtr>> with_parallel_loops(const std::vector<StepPtr>& steps, const ParallelSite& site, int count) {
  std::vector<StepPtr> out(steps.begin(), steps.begin() + static_cast<long>(site.first));
  if (count > 1) {
    std::vector<int> loops(count);
    for (int p = 0; p < count; ++p) loops[p] = p;
    out.push_back(std::make_shared<FuseStep>(site.stage, loops));
  }
  if (count > 0) out.push_back(std::make_shared<AnnotateStep>(site.stage, 0, IterAnnotation::Parallel));
  const int fused = std::max(count, 1);
  auto renumber = [&](int p) {
    int unfused = p == 0 ? 0 : p + site.fused - 1;  // the position before any fuse
    if (unfused == 0) return 0;
    return unfused >= fused ? unfused - fused + 1 : -1;
  };
  for (size_t k = site.annotate + 1; k < steps.size(); ++k) {
    StepPtr step = remap_loops(steps[k], site.stage, renumber);
    if (!step) return std::nullopt;
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace

std::string_view mutation_kind_name(MutationKind k) {
  switch (k) {
#define MUTATION(Enum, name, cpu_weight, gpu_weight) \
  case MutationKind::Enum: return name;
#include "sampler/mutation.def"
  }
  return "?";
}

const std::vector<MutationKind>& mutation_kinds() {
  static const std::vector<MutationKind> kinds = {
#define MUTATION(Enum, name, cpu_weight, gpu_weight) MutationKind::Enum,
#include "sampler/mutation.def"
  };
  return kinds;
}

// Each kind changes what the signature shows (split factors, fused loops, the pragmas' values),
// except a location, which is checked where it is chosen.
std::optional<State> Mutator::mutate(MutationKind kind, const State& program, std::mt19937_64& rng) const {
  switch (kind) {
    case MutationKind::TileSize: return mutate_tile_size(program, rng);
    case MutationKind::Parallel: return mutate_parallel(program, rng);
    case MutationKind::Unroll: return mutate_unroll(program, rng);
    case MutationKind::ComputeLocation: return mutate_compute_location(program, rng);
    case MutationKind::MemoryHint: return mutate_memory_hint(program, rng);
  }
  return std::nullopt;
}

std::optional<State> Mutator::mutate(const State& program, std::mt19937_64& rng) const {
  std::vector<MutationKind> kinds = mutation_kinds();
  std::vector<double> weights = {
#define MUTATION(Enum, name, cpu_weight, gpu_weight) ctx_.gpu ? (gpu_weight) : (cpu_weight),
#include "sampler/mutation.def"
  };
  while (!kinds.empty()) {
    size_t i = std::discrete_distribution<size_t>(weights.begin(), weights.end())(rng);
    if (std::optional<State> mutated = mutate(kinds[i], program, rng)) return mutated;
    kinds.erase(kinds.begin() + static_cast<long>(i));
    weights.erase(weights.begin() + static_cast<long>(i));
  }
  return std::nullopt;
}

std::optional<State> Mutator::mutate_tile_size(const State& program, std::mt19937_64& rng) const {
  SketchMatch match = catalog_->match(program);
  if (!match.found()) return std::nullopt;
  const std::vector<int>& splits = catalog_->open_splits(match.sketch);
  const std::vector<int64_t>& extents = catalog_->open_split_extents(match.sketch);
  struct Choice {
    int step;
    std::vector<TileMove> moves;
  };
  std::vector<Choice> choices;
  for (size_t i = 0; i < splits.size(); ++i) {
    auto& split = static_cast<const SplitStep&>(*program.steps()[splits[i]]);
    // The inner part of a GPU rfactor's split is a thread count, not a tile: up to a block.
    const int64_t max_innermost = ctx_.gpu && is_cross_thread_split(program.steps(), static_cast<size_t>(splits[i]))
                                      ? ctx_.gpu_limits.max_threads_per_block
                                      : ctx_.max_innermost_factor;
    const int64_t lanes = !ctx_.gpu && catalog_->open_split_vector_axes(match.sketch)[i]
                              ? stage_vector_lanes(program.stage(split.stage), ctx_.vector_lanes)
                              : 0;
    std::vector<TileMove> moves = tile_moves(extents[i], split.lengths, max_innermost, lanes);
    if (!moves.empty()) choices.push_back({splits[i], std::move(moves)});
  }
  if (choices.empty()) return std::nullopt;
  const Choice& choice = pick(choices, rng);
  const TileMove& move = pick(choice.moves, rng);
  auto& split = static_cast<const SplitStep&>(*program.steps()[choice.step]);
  std::vector<int64_t> lengths = split.lengths;
  if (move.from > 0) lengths[move.from - 1] /= move.factor;
  if (move.to > 0) lengths[move.to - 1] *= move.factor;
  std::vector<StepPtr> steps = program.steps();
  steps[choice.step] = std::make_shared<SplitStep>(split.stage, split.iter, lengths);
  return build_program(program.dag_ptr(), steps, ctx_);
}

std::optional<State> Mutator::mutate_parallel(const State& program, std::mt19937_64& rng) const {
  const std::vector<StepPtr>& steps = program.steps();
  for (const ParallelSite& site : shuffled(parallel_sites(steps, 0), rng)) {
    ProgramBuilder builder(program.dag_ptr(), ctx_);
    if (!builder.apply(steps, 0, site.first)) return std::nullopt;
    // The loops the annotator could have fused.
    const int leading = parallelizable_loops(builder.state(), site.stage);
    std::vector<int> counts;
    for (int c = 1; c <= leading; ++c)
      if (c != site.fused) counts.push_back(c);
    if (counts.empty()) continue;
    std::optional<std::vector<StepPtr>> rewritten = with_parallel_loops(steps, site, pick(counts, rng));
    if (!rewritten || !builder.apply(*rewritten, site.first, rewritten->size())) return std::nullopt;
    return builder.finish();
  }
  return std::nullopt;
}

std::optional<State> Mutator::mutate_unroll(const State& program, std::mt19937_64& rng) const {
  std::vector<size_t> pragmas;
  for (size_t k = 0; k < program.steps().size(); ++k) {
    auto* pragma = dynamic_cast<const PragmaStep*>(program.steps()[k].get());
    if (pragma && pragma->pragma == PragmaKind::AutoUnrollMaxStep) pragmas.push_back(k);
  }
  if (pragmas.empty()) return std::nullopt;
  size_t k = pick(pragmas, rng);
  auto& pragma = static_cast<const PragmaStep&>(*program.steps()[k]);
  std::vector<int64_t> values;
  for (int v : ctx_.unroll_steps)
    if (v != pragma.value) values.push_back(v);
  if (values.empty()) return std::nullopt;
  std::vector<StepPtr> steps = program.steps();
  steps[k] = std::make_shared<PragmaStep>(pragma.stage, pragma.iter, pragma.pragma, pick(values, rng));
  return build_program(program.dag_ptr(), steps, ctx_);
}

std::optional<State> Mutator::mutate_memory_hint(const State& program, std::mt19937_64& rng) const {
  std::vector<size_t> pragmas;
  for (size_t k = 0; k < program.steps().size(); ++k) {
    auto* pragma = dynamic_cast<const PragmaStep*>(program.steps()[k].get());
    if (pragma && (pragma->pragma == PragmaKind::PrefetchBytes || pragma->pragma == PragmaKind::StreamStores)) pragmas.push_back(k);
  }
  if (pragmas.empty()) return std::nullopt;
  size_t k = pick(pragmas, rng);
  auto& pragma = static_cast<const PragmaStep&>(*program.steps()[k]);
  int64_t value = pragma.value == 0 ? 1 : 0;
  if (pragma.pragma == PragmaKind::PrefetchBytes) {
    std::vector<int64_t> values = {0};
    for (int v : ctx_.prefetch_distances) values.push_back(v);
    values.erase(std::remove(values.begin(), values.end(), pragma.value), values.end());
    value = pick(values, rng);
  }
  std::vector<StepPtr> steps = program.steps();
  steps[k] = std::make_shared<PragmaStep>(pragma.stage, pragma.iter, pragma.pragma, value);
  return build_program(program.dag_ptr(), steps, ctx_);
}

std::optional<State> Mutator::mutate_compute_location(const State& program, std::mt19937_64& rng) const {
  SketchMatch match = catalog_->match(program);
  if (!match.found()) return std::nullopt;
  const std::vector<StepPtr>& steps = program.steps();
  // Annotation places the flexible stages first, right after the sketch's steps.
  size_t placed = match.prefix;
  while (placed < steps.size() && steps[placed]->places_stage()) ++placed;
  for (int stage : shuffled(catalog_->flexible_stages(match.sketch), rng)) {
    std::vector<StepPtr> head(steps.begin(), steps.begin() + static_cast<long>(match.prefix));
    StepPtr placement;  // the stage's own, if annotation did not leave it at the root
    for (size_t k = match.prefix; k < placed; ++k) {
      if (steps[k]->stage == stage)
        placement = steps[k];
      else
        head.push_back(steps[k]);
    }
    ProgramBuilder builder(program.dag_ptr(), ctx_);
    if (!builder.apply(head, 0, head.size())) return std::nullopt;
    const State& before = builder.state();
    auto* at = dynamic_cast<const ComputeAtStep*>(placement.get());
    const bool at_root = !placement || placement->kind() == StepKind::ComputeRoot;
    // The new location: a step, or nullptr for the root (where annotation leaves it unplaced).
    std::vector<StepPtr> options;
    if (!at_root && !ctx_.gpu) options.push_back(nullptr);
    if ((!placement || placement->kind() != StepKind::ComputeInline) && !program.stage(stage).op->reduction())
      options.push_back(std::make_shared<ComputeInlineStep>(stage));
    std::vector<int> consumers = before.consumers(stage);
    if (consumers.size() == 1 && before.stage(consumers[0]).location != ComputeLocation::Inlined) {
      int loops = static_cast<int>(before.stage(consumers[0]).leaves.size());
      for (int p = 0; p < loops; ++p)
        if (!at || at->target_stage != consumers[0] || at->target_iter != p)
          options.push_back(std::make_shared<ComputeAtStep>(stage, consumers[0], p));
    }
    if (options.empty()) continue;
    // Moves that end where the stage was (a loop that a later fuse merges with the old one) are
    // passed over for the other options.
    for (const StepPtr& chosen : shuffled(options, rng)) {
      std::vector<StepPtr> rewritten = head;
      if (chosen) rewritten.push_back(chosen);
      const size_t tail = rewritten.size();
      // What annotation did to the stage at the root does not suit it elsewhere: inlined it
      // has no loops, and inside another stage's loop it runs on that loop's threads.
      const bool leaves_root = at_root && chosen;
      const bool drop_own = chosen && (chosen->kind() == StepKind::ComputeInline || (leaves_root && ctx_.gpu));
      for (size_t k = placed; k < steps.size(); ++k)
        if (!drop_own || steps[k]->stage != stage) rewritten.push_back(steps[k]);
      std::optional<State> moved;
      if (std::optional<ParallelSite> site = leaves_root && !drop_own ? parallel_site_of(rewritten, tail, stage) : std::nullopt) {
        if (std::optional<std::vector<StepPtr>> serial = with_parallel_loops(rewritten, *site, 0))
          moved = build_program(program.dag_ptr(), *serial, ctx_);
      } else {
        moved = build_program(program.dag_ptr(), rewritten, ctx_);
      }
      if (moved && moved->signature() != program.signature()) return moved;
    }
  }
  return std::nullopt;
}

}  // namespace ansor
