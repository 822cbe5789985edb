// Random annotation (paper §4.2): a complete program from a sketch, every choice the sketch
// leaves open drawn at random, so that every program of the space can be reached: tile sizes,
// where flexible stages are computed, which outer loops run in parallel (or, on GPUs, bind to
// blocks and threads), which axis of a tile runs innermost, which inner loops are vectorised,
// how far loops are unrolled, whether const inputs are packed for their consumer, and on CPUs
// whether streaming loops prefetch their inputs and bypass the caches with their stores.
#pragma once

#include <random>

#include "sampler/factorization.h"
#include "sampler/sketch_generator.h"

namespace ansor {

class Annotator {
 public:
  explicit Annotator(SamplerContext ctx) : ctx_(std::move(ctx)) {}

  // A random complete program of the sketch. Throws StepError (or InvalidState from bound
  // inference) in the rare case where the choices do not combine; callers draw again.
  State annotate(const State& sketch, std::mt19937_64& rng);

 private:
  std::vector<StepPtr> fill_tile_sizes(const State& sketch, std::mt19937_64& rng);
  void choose_compute_locations(State& s, std::mt19937_64& rng);
  void parallelize(State& s, std::mt19937_64& rng);
  void bind_gpu_threads(State& s, std::mt19937_64& rng);
  // CPU: half of the tiled stages get another axis of their innermost tile as the innermost
  // loop, the one that is vectorised: the row of an NCHW output is often too short for a vector
  // where its output channels are not (local buffers follow their loops' order, so that axis's
  // accumulators are contiguous).
  void choose_innermost_axes(State& s, std::mt19937_64& rng);
  // Splits long innermost spatial loops by one or two vectors' lanes and vectorises the lanes.
  void split_vector_loops(State& s, std::mt19937_64& rng);
  void vectorize(State& s, std::mt19937_64& rng);
  void unroll(State& s, std::mt19937_64& rng);
  // CPU: stages whose innermost loop is a vector loop get, each half of the time, prefetching of
  // the kernel inputs of at least min_streamed_bytes they read, when they are maps or
  // reductions of one tensor (the first pass over a row), not products; and elementwise stages
  // at the root that store a kernel output of that size, stores that bypass the caches.
  void choose_memory_hints(State& s, std::mt19937_64& rng);
  // Const inputs read by one tiled stage, and the rhs of tensorized stages, are packed in its
  // loop order.
  void rewrite_layouts(State& s);

  SamplerContext ctx_;
  Factorizations factorizations_;
};

// A random program of the space: a sketch drawn uniformly and annotated, drawn again when the
// choices do not combine (rethrown after 100 draws).
State sample_program(const std::vector<Sketch>& sketches, Annotator& annotator, std::mt19937_64& rng);

// A program of the search space of a seed (`--schedule sampled`): a sketch of the target, randomly
// annotated, as the search's first programs are; on a GPU drawn again until one is within the
// GPU's limits (within_gpu_limits: with the context's launch check, one that lowers and
// launches). Throws InvalidState when none of 1000 draws is.
State sampled_program(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, uint64_t seed);

// A random program of a seed (`--schedule random`): on CPUs a random valid schedule of every
// transform step (schedule/random_schedule.h, the lowering's fuzzer); on GPUs, whose loops must
// be bound to blocks and threads, sampled_program.
State random_program(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, uint64_t seed);

}  // namespace ansor
