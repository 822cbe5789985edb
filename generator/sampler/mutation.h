// Mutations of complete programs (paper §5.1), the evolutionary search's small steps. Each takes
// a program (a State whose steps are its sketch's, then annotation's) and rewrites its step
// list, then rebuilds it (ProgramBuilder): a result that does not replay, infer bounds or, on a
// GPU, respect the thread limits is rejected, and so is a kind with nothing to change.
//
//   tile-size         a split whose lengths the sketch left open moves a factor from one level
//                     (the outer part included, when the split divides the loop exactly) to
//                     another: the product of the levels is kept, the innermost stays within
//                     max_innermost_factor (a block's threads for the thread count of a
//                     reduction across threads), and follow splits of it follow on replay;
//   parallel          a stage's fused parallel loop fuses another number of its leading loops;
//   unroll            an auto_unroll_max_step pragma takes another value of unroll_steps;
//   memory-hint       a prefetch_bytes pragma takes another of prefetch_distances or 0, a
//                     stream_stores pragma turns over (CPU);
//   compute-location  a stage whose location the sketch left open moves to another loop of its
//                     consumer, to the root or inline (not to an unbound root on a GPU).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "sampler/sampler_context.h"
#include "sampler/sketch_catalog.h"

namespace ansor {

enum class MutationKind : uint8_t {
#define MUTATION(Enum, name, cpu_weight, gpu_weight) Enum,
#include "sampler/mutation.def"
};

std::string_view mutation_kind_name(MutationKind k);
const std::vector<MutationKind>& mutation_kinds();

class Mutator {
 public:
  Mutator(SamplerContext ctx, std::shared_ptr<const SketchCatalog> catalog) : ctx_(std::move(ctx)), catalog_(std::move(catalog)) {}

  // The program mutated by one kind; nothing when the kind does not apply or its result is
  // rejected. Tile-size and compute-location need the program's sketch in the catalog.
  std::optional<State> mutate(MutationKind kind, const State& program, std::mt19937_64& rng) const;
  // A kind drawn by the weights of mutation.def for the target's kind; kinds that give nothing
  // are passed over for the others.
  std::optional<State> mutate(const State& program, std::mt19937_64& rng) const;

 private:
  std::optional<State> mutate_tile_size(const State& program, std::mt19937_64& rng) const;
  std::optional<State> mutate_parallel(const State& program, std::mt19937_64& rng) const;
  std::optional<State> mutate_unroll(const State& program, std::mt19937_64& rng) const;
  std::optional<State> mutate_memory_hint(const State& program, std::mt19937_64& rng) const;
  std::optional<State> mutate_compute_location(const State& program, std::mt19937_64& rng) const;

  SamplerContext ctx_;
  std::shared_ptr<const SketchCatalog> catalog_;
};

}  // namespace ansor
