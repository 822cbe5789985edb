// Mutations: over many seeds and every operator kind, every mutated program lowers and computes
// what the naive program computes; each kind changes what it claims and nothing else (tile
// products kept and the innermost bounded, another unroll value, another number of parallel
// loops, another location of a flexible stage); GPU programs stay within the thread limits.
#include "sampler/mutation.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <random>

#include "program_reference.h"
#include "sampler/annotation.h"
#include "sampler/gpu_binding.h"
#include "sampler/program_builder.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

struct Task {
  std::string name;
  std::shared_ptr<const ComputeDAG> dag;
  std::shared_ptr<const SketchCatalog> catalog;
};

std::vector<Task> tasks(const SamplerContext& ctx) {
  Program program = test::parse(test::kOperatorKernels, "mutation_test.def");
  std::vector<Task> out;
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    out.push_back({kernel.name, dag, std::make_shared<const SketchCatalog>(generate_sketches(dag, ctx, SketchRules::for_context(ctx)))});
  }
  return out;
}

// A bias + gelu whose output (1 MiB) is large enough for memory pragmas.
Task streaming_bias_gelu(const SamplerContext& ctx) {
  auto dag = test::dag_of(test::parse("kernel bias_gelu { X = input f32[256, 1024]\n b = const f32[1024]\n Y = gelu(bias_add(X, b, axis = 1)) }"),
                          "bias_gelu");
  return {"bias_gelu", dag, std::make_shared<const SketchCatalog>(generate_sketches(dag, ctx, SketchRules::for_context(ctx)))};
}

// The steps that differ between two programs of the same length.
std::vector<size_t> changed_steps(const State& a, const State& b) {
  std::vector<size_t> out;
  for (size_t k = 0; k < a.steps().size(); ++k)
    if (a.steps()[k]->to_json() != b.steps()[k]->to_json()) out.push_back(k);
  return out;
}

// The pragma step a mutation changed, before and after: nulls unless exactly one step changed
// and it is a pragma on both sides.
std::pair<const PragmaStep*, const PragmaStep*> changed_pragma(const State& program, const State& mutated) {
  std::vector<size_t> changed = changed_steps(program, mutated);
  if (changed.size() != 1) return {nullptr, nullptr};
  return {dynamic_cast<const PragmaStep*>(program.steps()[changed[0]].get()),
          dynamic_cast<const PragmaStep*>(mutated.steps()[changed[0]].get())};
}

// The loops fused into the stage's parallel loop (0 when it has none).
int parallel_loops(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  if (st.leaves.empty() || st.leaf(0).annotation != IterAnnotation::Parallel) return 0;
  for (const IterRelation& rel : st.relations)
    if (rel.kind == IterRelation::Kind::Fuse && rel.outputs[0] == st.leaves[0]) return static_cast<int>(rel.inputs.size());
  return 1;
}

// Where a stage is computed, by names.
std::string location_of(const State& s, int stage) {
  const Stage& st = s.stage(stage);
  switch (st.location) {
    case ComputeLocation::Root: return "root";
    case ComputeLocation::Inlined: return "inline";
    case ComputeLocation::At: return s.stage(st.attach_stage).op->name + ":" + s.stage(st.attach_stage).iters[st.attach_iter].name;
  }
  return "?";
}

TEST(MutationTest, EveryMutatedProgramComputesTheReference) {
  SamplerContext ctx;
  ctx.min_streamed_bytes = 0;  // memory pragmas on these small kernels too, to be mutated
  std::map<MutationKind, int> made;
  for (const Task& task : tasks(ctx)) {
    test::ProgramReference reference(task.dag);
    Annotator annotator(ctx);
    Mutator mutator(ctx, task.catalog);
    std::mt19937_64 rng(1);
    for (int i = 0; i < 12; ++i) {
      State program = sample_program(task.catalog->sketches(), annotator, rng);
      for (MutationKind kind : mutation_kinds()) {
        std::optional<State> mutated = mutator.mutate(kind, program, rng);
        if (!mutated) continue;
        ++made[kind];
        EXPECT_NE(mutated->signature(), program.signature()) << task.name << " " << mutation_kind_name(kind);
        EXPECT_TRUE(reference.matches(*mutated)) << task.name << " " << mutation_kind_name(kind) << " of\n" << describe_steps(program);
      }
    }
  }
  for (MutationKind kind : mutation_kinds()) EXPECT_GT(made[kind], 10) << mutation_kind_name(kind);
}

TEST(MutationTest, TileSizeMovesAFactorBetweenLevelsOfOneSplit) {
  SamplerContext ctx;
  ctx.max_innermost_factor = 8;
  Task task = tasks(ctx)[0];  // matmul: 24 x 20 x 16, every split exact
  ASSERT_EQ(task.name, "matmul");
  Annotator annotator(ctx);
  Mutator mutator(ctx, task.catalog);
  std::mt19937_64 rng(2);
  int checked = 0;
  for (int i = 0; i < 100; ++i) {
    State program = sample_program(task.catalog->sketches(), annotator, rng);
    std::optional<State> mutated = mutator.mutate(MutationKind::TileSize, program, rng);
    if (!mutated) continue;
    ASSERT_EQ(mutated->steps().size(), program.steps().size());
    std::vector<size_t> changed = changed_steps(program, *mutated);
    ASSERT_EQ(changed.size(), 1u) << describe_steps(program) << "\n" << describe_steps(*mutated);
    auto* before = dynamic_cast<const SplitStep*>(program.steps()[changed[0]].get());
    auto* after = dynamic_cast<const SplitStep*>(mutated->steps()[changed[0]].get());
    ASSERT_TRUE(before && after);
    ASSERT_EQ(before->lengths.size(), after->lengths.size());
    std::vector<StepPtr> earlier(program.steps().begin(), program.steps().begin() + static_cast<long>(changed[0]));
    const int64_t extent = replay(task.dag, earlier).stage(before->stage).leaf(before->iter).extent;
    int64_t product_before = 1, product_after = 1;
    for (size_t l = 0; l < before->lengths.size(); ++l) {
      product_before *= before->lengths[l];
      product_after *= after->lengths[l];
    }
    // The levels' product, the outer part included, is the loop's extent before and after.
    EXPECT_EQ(extent % product_before, 0);
    EXPECT_EQ(extent % product_after, 0);
    // One factor moved: the lengths' ratios multiply to it or its inverse.
    EXPECT_LE(after->lengths.back(), ctx.max_innermost_factor);
    if (product_before == product_after) {
      int grew = 0, shrank = 0;
      for (size_t l = 0; l < before->lengths.size(); ++l) {
        grew += after->lengths[l] > before->lengths[l];
        shrank += after->lengths[l] < before->lengths[l];
      }
      EXPECT_EQ(grew, 1);
      EXPECT_EQ(shrank, 1);
    }
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(MutationTest, UnrollTakesAnotherValueOfTheContext) {
  SamplerContext ctx;
  Task task = tasks(ctx)[1];
  Annotator annotator(ctx);
  Mutator mutator(ctx, task.catalog);
  std::mt19937_64 rng(3);
  int checked = 0;
  for (int i = 0; i < 40; ++i) {
    State program = sample_program(task.catalog->sketches(), annotator, rng);
    std::optional<State> mutated = mutator.mutate(MutationKind::Unroll, program, rng);
    if (!mutated) continue;
    auto [before, after] = changed_pragma(program, *mutated);
    ASSERT_TRUE(before && after);
    EXPECT_NE(before->value, after->value);
    EXPECT_NE(std::find(ctx.unroll_steps.begin(), ctx.unroll_steps.end(), after->value), ctx.unroll_steps.end());
    EXPECT_EQ(mutated->stage(after->stage).pragma(PragmaKind::AutoUnrollMaxStep), after->value);
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

// Annotation gives streaming stages memory pragmas about half of the time (bias + gelu's 1 MiB
// output stage; the tiny kernels of the other tests get none), and the memory-hint mutation
// changes one: a prefetch distance to another of the context's or 0, stream_stores turned
// over; the stage shows the new value.
TEST(MutationTest, MemoryHintChangesOnePrefetchOrStreamPragma) {
  SamplerContext ctx;
  Task task = streaming_bias_gelu(ctx);
  Annotator annotator(ctx);
  Mutator mutator(ctx, task.catalog);
  std::mt19937_64 rng(5);
  int checked = 0, prefetching = 0, streaming = 0;
  for (int i = 0; i < 60; ++i) {
    State program = sample_program(task.catalog->sketches(), annotator, rng);
    const Stage& out = program.stage(program.num_stages() - 1);
    prefetching += out.pragma(PragmaKind::PrefetchBytes) > 0;
    streaming += out.pragma(PragmaKind::StreamStores);
    std::optional<State> mutated = mutator.mutate(MutationKind::MemoryHint, program, rng);
    if (!mutated) continue;
    auto [before, after] = changed_pragma(program, *mutated);
    ASSERT_TRUE(before && after);
    EXPECT_EQ(before->pragma, after->pragma);
    EXPECT_NE(before->value, after->value);
    const Stage& st = mutated->stage(after->stage);
    if (after->pragma == PragmaKind::PrefetchBytes) {
      EXPECT_TRUE(after->value == 0 || std::count(ctx.prefetch_distances.begin(), ctx.prefetch_distances.end(), after->value) == 1);
      EXPECT_EQ(st.pragma(PragmaKind::PrefetchBytes), after->value);
    } else {
      ASSERT_EQ(after->pragma, PragmaKind::StreamStores);
      EXPECT_EQ(st.pragma(PragmaKind::StreamStores) == 1, after->value == 1);
    }
    ++checked;
  }
  EXPECT_GT(prefetching, 10);
  EXPECT_GT(streaming, 10);
  EXPECT_GT(checked, 20);
  // GPU programs get none: the mutation has nothing to change.
  SamplerContext gpu = SamplerContext::for_gpu(parse_target("cuda:sm_80"));
  Task gpu_task = streaming_bias_gelu(gpu);
  Annotator gpu_annotator(gpu);
  Mutator gpu_mutator(gpu, gpu_task.catalog);
  for (int i = 0; i < 10; ++i)
    EXPECT_FALSE(gpu_mutator.mutate(MutationKind::MemoryHint, sample_program(gpu_task.catalog->sketches(), gpu_annotator, rng), rng));
}

TEST(MutationTest, ParallelChangesTheLoopsOfOneParallelLoop) {
  SamplerContext ctx;
  std::mt19937_64 rng(4);
  int checked = 0;
  for (const Task& task : tasks(ctx)) {
    Annotator annotator(ctx);
    Mutator mutator(ctx, task.catalog);
    for (int i = 0; i < 15; ++i) {
      State program = sample_program(task.catalog->sketches(), annotator, rng);
      std::optional<State> mutated = mutator.mutate(MutationKind::Parallel, program, rng);
      if (!mutated) continue;
      int differing = 0;
      for (int s = 0; s < program.num_stages(); ++s) {
        if (parallel_loops(program, s) == parallel_loops(*mutated, s)) continue;
        ++differing;
        EXPECT_GT(parallel_loops(program, s), 0);
        EXPECT_GT(parallel_loops(*mutated, s), 0);
      }
      EXPECT_EQ(differing, 1) << task.name << "\n" << describe_steps(program) << "\n" << describe_steps(*mutated);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(MutationTest, ComputeLocationMovesOneFlexibleStage) {
  SamplerContext ctx;
  std::mt19937_64 rng(5);
  int checked = 0;
  for (const Task& task : tasks(ctx)) {
    Annotator annotator(ctx);
    Mutator mutator(ctx, task.catalog);
    for (int i = 0; i < 15; ++i) {
      State program = sample_program(task.catalog->sketches(), annotator, rng);
      std::optional<State> mutated = mutator.mutate(MutationKind::ComputeLocation, program, rng);
      if (!mutated) continue;
      SketchMatch match = task.catalog->match(program);
      ASSERT_TRUE(match.found());
      // (It may now match a longer sketch: one whose rule places that stage where it went.)
      EXPECT_TRUE(task.catalog->match(*mutated).found());
      const std::vector<int>& flexible = task.catalog->flexible_stages(match.sketch);
      // One flexible stage moved; others differ only where they are computed inside it (its
      // loops may have lost the parallel fuse).
      std::vector<int> moved;
      for (int s : flexible)
        if (location_of(program, s) != location_of(*mutated, s)) moved.push_back(s);
      ASSERT_EQ(moved.size(), 1u) << task.name << "\n" << describe_steps(program) << "\n" << describe_steps(*mutated);
      for (int s = 0; s < program.num_stages(); ++s) {
        if (s == moved[0] || location_of(program, s) == location_of(*mutated, s)) continue;
        EXPECT_EQ(program.stage(s).attach_stage, moved[0]) << program.stage(s).op->name;
        EXPECT_EQ(mutated->stage(s).attach_stage, moved[0]) << program.stage(s).op->name;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(MutationTest, GpuMutationsComputeTheReferenceWithinTheThreadLimits) {
  SamplerContext ctx;
  ctx.gpu = true;
  ctx.gpu_limits.max_threads_per_block = 256;
  int made = 0;
  for (const Task& task : tasks(ctx)) {
    if (task.name != "matmul" && task.name != "softmax" && task.name != "conv_bias_relu") continue;
    test::ProgramReference reference(task.dag);
    Annotator annotator(ctx);
    Mutator mutator(ctx, task.catalog);
    std::mt19937_64 rng(6);
    for (int i = 0; i < 6; ++i) {
      State program = sample_program(task.catalog->sketches(), annotator, rng);
      for (MutationKind kind : mutation_kinds()) {
        std::optional<State> mutated = mutator.mutate(kind, program, rng);
        if (!mutated) continue;
        ++made;
        EXPECT_TRUE(within_gpu_limits(*mutated, ctx)) << describe_steps(*mutated);
        EXPECT_TRUE(reference.matches(*mutated)) << task.name << " " << mutation_kind_name(kind);
      }
    }
  }
  EXPECT_GT(made, 10);
}

// The thread count of a reduction across threads (the inner part of a GPU rfactor's split) moves
// beyond the tile limit, up to a block, and stays a count whose threads can combine values; GPU
// programs never get the parallel mutation.
TEST(MutationTest, GpuReductionsAcrossThreadsMutateTheirThreadCount) {
  SamplerContext ctx = SamplerContext::for_gpu(parse_target("cuda:sm_80"));
  Program program = test::parse("kernel rows { X = input f32[4, 4096]\n S[i:4] = sum(k:4096, X[i, k] * X[i, k]) }");
  auto dag = test::dag_of(program, "rows");
  auto catalog = std::make_shared<const SketchCatalog>(generate_sketches(dag, ctx, SketchRules::for_context(ctx)));
  Annotator annotator(ctx);
  Mutator mutator(ctx, catalog);
  test::ProgramReference reference(dag);
  std::mt19937_64 rng(11);
  std::set<int64_t> counts;
  for (int i = 0; i < 40; ++i) {
    State program_state = sample_program(catalog->sketches(), annotator, rng);
    EXPECT_FALSE(mutator.mutate(MutationKind::Parallel, program_state, rng));
    std::optional<State> mutated = mutator.mutate(program_state, rng);
    if (!mutated) continue;
    for (size_t k = 0; k < mutated->steps().size(); ++k) {
      if (!is_cross_thread_split(mutated->steps(), k)) continue;
      int64_t threads = static_cast<const SplitStep&>(*mutated->steps()[k]).lengths[0];
      EXPECT_TRUE(ctx.gpu_limits.reduces_across(threads)) << threads;
      counts.insert(threads);
    }
    EXPECT_TRUE(reference.matches(*mutated)) << describe_steps(*mutated);
  }
  EXPECT_GT(*counts.rbegin(), 64) << "no thread count above the tile limit";
  EXPECT_GE(counts.size(), 3u);
}

TEST(MutationTest, ProgramsOfNoKnownSketchGetOnlyTheKindsThatNeedNone) {
  SamplerContext ctx;
  Task task = tasks(ctx)[0];
  Annotator annotator(ctx);
  std::mt19937_64 rng(7);
  State program = sample_program(task.catalog->sketches(), annotator, rng);
  // A catalog without the program's sketch: as for a record from older derivation rules.
  std::vector<Sketch> others;
  int own = task.catalog->match(program).sketch;
  for (size_t s = 0; s < task.catalog->sketches().size(); ++s)
    if (static_cast<int>(s) != own) others.push_back(task.catalog->sketches()[s]);
  auto catalog = std::make_shared<const SketchCatalog>(others);
  ASSERT_FALSE(catalog->match(program).found());
  Mutator mutator(ctx, catalog);
  EXPECT_FALSE(mutator.mutate(MutationKind::TileSize, program, rng));
  EXPECT_FALSE(mutator.mutate(MutationKind::ComputeLocation, program, rng));
  EXPECT_TRUE(mutator.mutate(MutationKind::Unroll, program, rng));
}

}  // namespace
}  // namespace ansor
