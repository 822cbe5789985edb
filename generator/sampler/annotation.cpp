// Random annotation of sketches.
#include "sampler/annotation.h"

#include <algorithm>
#include <string>

#include "sampler/gpu_binding.h"
#include "sampler/program_builder.h"
#include "sampler/random_choice.h"
#include "sampler/sketch_rule.h"
#include "schedule/bound_inference.h"
#include "schedule/random_schedule.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

bool chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

bool is_tiled(const Stage& st) { return !st.relations.empty() && st.op->reduction(); }

}  // namespace

std::vector<StepPtr> Annotator::fill_tile_sizes(const State& sketch, std::mt19937_64& rng) {
  State replaying(sketch.dag_ptr());
  std::vector<StepPtr> steps;
  const std::vector<StepPtr>& sketch_steps = sketch.steps();
  for (size_t k = 0; k < sketch_steps.size(); ++k) {
    const StepPtr& step = sketch_steps[k];
    StepPtr filled = step;
    if (auto* split = dynamic_cast<const SplitStep*>(step.get());
        split && std::find(split->lengths.begin(), split->lengths.end(), 0) != split->lengths.end()) {
      int64_t extent = replaying.stage(split->stage).leaf(split->iter).extent;
      const int64_t lanes = !ctx_.gpu && splits_vector_axis(replaying, *split)
                                ? stage_vector_lanes(replaying.stage(split->stage), ctx_.vector_lanes)
                                : 0;
      std::vector<int64_t> lengths =
          ctx_.gpu && is_cross_thread_split(sketch_steps, k)
              ? std::vector<int64_t>{pick(reduction_thread_counts(extent, ctx_), rng)}
              : factorizations_.sample(extent, static_cast<int>(split->lengths.size()), ctx_.max_innermost_factor, lanes, rng);
      filled = std::make_shared<SplitStep>(split->stage, split->iter, lengths);
    }
    replaying.apply(filled);
    steps.push_back(filled);
  }
  return steps;
}

void Annotator::choose_compute_locations(State& s, std::mt19937_64& rng) {
  for (int i = s.num_stages() - 1; i >= 0; --i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location != ComputeLocation::Root || s.is_kernel_output(i) || !st.relations.empty()) continue;
    std::vector<int> consumers = s.consumers(i);
    if (consumers.size() != 1) continue;
    int target = consumers[0];
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0: break;  // stays at the root
      case 1: s.try_apply(std::make_shared<ComputeInlineStep>(i)); break;
      default: {
        const Stage& t = s.stage(target);
        if (t.location == ComputeLocation::Inlined || t.leaves.empty()) break;
        int position = std::uniform_int_distribution<int>(0, static_cast<int>(t.leaves.size()) - 1)(rng);
        s.try_apply(std::make_shared<ComputeAtStep>(i, target, position));
      }
    }
  }
}

void Annotator::parallelize(State& s, std::mt19937_64& rng) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location != ComputeLocation::Root) continue;
    const int leading = parallelizable_loops(s, i);
    int64_t extent = 1;
    for (int p = 0; p < leading; ++p) extent *= std::max<int64_t>(1, st.leaf(p).extent);
    if (leading == 0 || extent <= 1 || !chance(rng, 0.9)) continue;
    // Enough outer loops to keep every thread busy, sometimes more.
    int count = 1;
    int64_t fused = std::max<int64_t>(1, st.leaf(0).extent);
    while (count < leading && (fused < ctx_.parallelism * 4 || chance(rng, 0.2))) fused *= std::max<int64_t>(1, st.leaf(count++).extent);
    if (count > 1) {
      std::vector<int> loops(count);
      for (int p = 0; p < count; ++p) loops[p] = p;
      if (!s.try_apply(std::make_shared<FuseStep>(i, loops))) continue;
    }
    s.try_apply(std::make_shared<AnnotateStep>(i, 0, IterAnnotation::Parallel));
  }
}

void Annotator::bind_gpu_threads(State& s, std::mt19937_64& rng) {
  static const std::vector<int64_t> kThreads = {32, 64, 128, 256, 512};
  static const std::vector<int64_t> kFetchLanes = {1, 2, 4};
  ansor::bind_gpu_threads(s, {[&](int64_t) { return pick(kThreads, rng); }, [&](int64_t, int64_t) { return pick(kFetchLanes, rng); }});
}

void Annotator::choose_innermost_axes(State& s, std::mt19937_64& rng) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (!is_tiled(st) || st.leaves.empty() || !chance(rng, 0.5)) continue;
    // The innermost tile: the spatial loops after the last reduction loop.
    int first = static_cast<int>(st.leaves.size());
    while (first > 0 && st.leaf(first - 1).kind == IterKind::Spatial) --first;
    std::vector<int> candidates;
    for (int p = first; p < static_cast<int>(st.leaves.size()); ++p)
      if (st.leaf(p).extent >= 2) candidates.push_back(p);
    if (candidates.empty()) continue;
    const int last = pick(candidates, rng);
    if (last == static_cast<int>(st.leaves.size()) - 1) continue;
    std::vector<int> order;
    for (int p = 0; p < static_cast<int>(st.leaves.size()); ++p)
      if (p != last) order.push_back(p);
    order.push_back(last);
    s.try_apply(std::make_shared<ReorderStep>(i, order));
  }
}

void Annotator::split_vector_loops(State& s, std::mt19937_64& rng) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined || !chance(rng, 0.9)) continue;
    vectorize_innermost_axis(s, i, chance(rng, 0.5) ? ctx_.vector_lanes : 2 * ctx_.vector_lanes);
  }
}

void Annotator::vectorize(State& s, std::mt19937_64& rng) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined || st.leaves.empty()) continue;
    int last = static_cast<int>(st.leaves.size()) - 1;
    const Iterator& it = st.leaf(last);
    if (it.kind != IterKind::Spatial || it.annotation != IterAnnotation::None || it.extent < 2 || it.extent > 64) continue;
    if (chance(rng, 0.9)) s.try_apply(std::make_shared<AnnotateStep>(i, last, IterAnnotation::Vectorize));
  }
}

void Annotator::unroll(State& s, std::mt19937_64& rng) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined || st.leaves.empty()) continue;
    // Reductions always get a choice; other stages mostly have a vector loop worth unrolling around.
    if (st.op->reduction() || chance(rng, 0.5))
      s.try_apply(std::make_shared<PragmaStep>(i, 0, PragmaKind::AutoUnrollMaxStep, pick(ctx_.unroll_steps, rng)));
  }
}

void Annotator::choose_memory_hints(State& s, std::mt19937_64& rng) {
  auto bytes_of = [](const Stage& st) { return st.op->num_elements() * dtype_bytes(st.op->dtype); };
  // The stages that read a kernel input too large for the caches (through inlined stages too).
  std::vector<bool> reads_stream(s.num_stages(), false);
  for (int i = 0; i < s.num_stages(); ++i)
    if (s.stage(i).is_placeholder() && bytes_of(s.stage(i)) >= ctx_.min_streamed_bytes)
      for (int c : s.consumers(i)) reads_stream[c] = true;
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || st.location == ComputeLocation::Inlined || st.leaves.empty() ||
        st.leaf(static_cast<int>(st.leaves.size()) - 1).annotation != IterAnnotation::Vectorize)
      continue;
    // A product of tensors (matmul, convolution) reuses its inputs from the caches through its
    // tiles; a reduction of one tensor (a row's maximum or sum) streams it like a map does.
    const bool streams_in = reads_stream[i] && (!st.op->reduction() || read_tensors(*st.op).size() == 1);
    const bool streams_out = st.location == ComputeLocation::Root && !st.op->reduction() && s.is_kernel_output(i) &&
                             s.consumers(i).empty() && bytes_of(st) >= ctx_.min_streamed_bytes;
    if (streams_in && chance(rng, 0.5))
      s.try_apply(std::make_shared<PragmaStep>(i, 0, PragmaKind::PrefetchBytes, pick(ctx_.prefetch_distances, rng)));
    if (streams_out && chance(rng, 0.5)) s.try_apply(std::make_shared<PragmaStep>(i, 0, PragmaKind::StreamStores, 1));
  }
}

void Annotator::rewrite_layouts(State& s) {
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (!st.is_placeholder() || !(st.op->is_const || is_tensorized_rhs(s, i))) continue;
    std::vector<int> consumers = s.consumers(i);
    if (consumers.size() == 1 && is_tiled(s.stage(consumers[0]))) s.try_apply(std::make_shared<LayoutRewriteStep>(i));
  }
}

State Annotator::annotate(const State& sketch, std::mt19937_64& rng) {
  State s = replay(sketch.dag_ptr(), fill_tile_sizes(sketch, rng));
  choose_compute_locations(s, rng);
  if (ctx_.gpu) {
    bind_gpu_threads(s, rng);
  } else {
    infer_bounds(s);
    choose_innermost_axes(s, rng);
    split_vector_loops(s, rng);
    parallelize(s, rng);
    infer_bounds(s);
    vectorize(s, rng);
    rewrite_layouts(s);
  }
  unroll(s, rng);
  // Drawn last, so that every earlier choice of a seed stays what it was without them.
  if (!ctx_.gpu) choose_memory_hints(s, rng);
  infer_bounds(s);
  return s;
}

State sample_program(const std::vector<Sketch>& sketches, Annotator& annotator, std::mt19937_64& rng) {
  for (int attempt = 0;; ++attempt) {
    const Sketch& sketch = pick(sketches, rng);
    try {
      return annotator.annotate(sketch.state, rng);
    } catch (const StepError&) {
      if (attempt >= 100) throw;
    } catch (const InvalidState&) {
      if (attempt >= 100) throw;
    }
  }
}

State random_program(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, uint64_t seed) {
  return ctx.gpu ? sampled_program(dag, ctx, seed) : random_schedule(dag, seed);
}

State sampled_program(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, uint64_t seed) {
  Annotator annotator(ctx);
  std::mt19937_64 rng(seed);
  const std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
  constexpr int kDraws = 1000;
  for (int draw = 0; draw < kDraws; ++draw) {
    State program = sample_program(sketches, annotator, rng);
    if (within_gpu_limits(program, ctx)) return program;
  }
  throw InvalidState("none of " + std::to_string(kDraws) + " programs sampled from the sketches is within the GPU's limits");
}

}  // namespace ansor
