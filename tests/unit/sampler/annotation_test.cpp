// Random annotation: every sketch of every test kernel, annotated with many seeds (and the
// default schedule), lowers to a program that computes what the naive program computes; tile
// sizes cover every factorisation of a loop, near uniformly.
#include "sampler/annotation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "sampler/default_schedule.h"
#include "sampler/mutation.h"
#include "sampler/sketch_catalog.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kAnnotationKernels = R"(
kernel matmul {
  A = input f32[24, 16]
  B = const f32[16, 20]
  C[i:24, j:20] = sum(k:16, A[i, k] * B[k, j])
}
kernel conv_bias_relu {
  X = input f32[1, 4, 7, 7]
  W = const f32[6, 4, 3, 3]
  b = const f32[6]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel norm {
  A = input f32[32, 40]
  S[x:1] = sum(i:32, j:40, A[i, j] * A[i, j])
  N[x:1] = sqrt(S[x])
}
kernel softmax {
  X = input f32[6, 20]
  Y = softmax(X)
}
kernel depthwise {
  X = input f32[1, 4, 9, 9]
  W = const f32[4, 1, 3, 3]
  Y = depthwise_conv2d_nchw(X, W, stride = 2, pad = 1)
}
kernel layer_norm {
  X = input f32[3, 24]
  g = const f32[24]
  b = const f32[24]
  Y = layer_norm(X, g, b)
}
kernel row_norm {
  X = input f32[5, 48]
  S[i:5] = sqrt(sum(k:48, X[i, k] * X[i, k]))
}
kernel bias_gelu {
  X = input f32[6, 40]
  b = const f32[40]
  Y = gelu(bias_add(X, b, axis = 1))
}
kernel matmul_1000 {
  A = input f32[4, 16]
  B = const f32[16, 1000]
  C[i:4, j:1000] = sum(k:16, A[i, k] * B[k, j])
}
kernel ragged_matmul {
  A = input f32[13, 7]
  B = input f32[7, 17]
  C = matmul(A, B)
}
)";

Program load_kernels() { return test::parse(kAnnotationKernels, "annotation_test.def"); }

std::vector<std::vector<double>> inputs_for(const LoweredKernel& k) { return test::random_args(k, 3); }

// Runs `state` in the interpreter on the inputs of `naive` and compares with its outputs.
void expect_matches_naive(const State& state, const LoweredKernel& naive, const std::vector<std::vector<double>>& plain_inputs,
                          const std::vector<std::vector<double>>& expected, const std::string& what) {
  LoweredKernel k = lower_state(state, "k");
  std::vector<std::vector<double>> args = test::packed_args(k, plain_inputs);
  interpret(k, args);
  for (size_t p = 0; p < args.size(); ++p) {
    if (!naive.buffers[naive.params[p]].is_output) continue;
    for (size_t e = 0; e < args[p].size(); ++e)
      ASSERT_NEAR(args[p][e], expected[p][e], 1e-4 * std::max(1.0, std::fabs(expected[p][e])))
          << what << ", element " << e << "\n" << describe_steps(state) << to_string(k);
  }
}

TEST(AnnotationTest, EverySketchAnnotatedManyTimesComputesTheSameResult) {
  Program program = load_kernels();
  SamplerContext ctx;
  Annotator annotator(ctx);
  int programs = 0;
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    LoweredKernel naive = lower_state(State(dag), "naive");
    std::vector<std::vector<double>> inputs = inputs_for(naive), expected = inputs;
    interpret(naive, expected);
    std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::cpu());
    for (size_t s = 0; s < sketches.size(); ++s) {
      for (uint64_t seed = 0; seed < 25; ++seed) {
        std::mt19937_64 rng(seed);
        State annotated = annotator.annotate(sketches[s].state, rng);
        expect_matches_naive(annotated, naive, inputs, expected, kernel.name + " sketch " + std::to_string(s) + " seed " + std::to_string(seed));
        ++programs;
      }
    }
    expect_matches_naive(default_schedule(dag, ctx), naive, inputs, expected, kernel.name + " default schedule");
  }
  EXPECT_GT(programs, 300);
}

TEST(AnnotationTest, GpuProgramsRunBlockByBlockOnTheCpu) {
  Program program = load_kernels();
  SamplerContext ctx;
  ctx.gpu = true;
  Annotator annotator(ctx);
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    LoweredKernel naive = lower_state(State(dag), "naive");
    std::vector<std::vector<double>> inputs = inputs_for(naive), expected = inputs;
    interpret(naive, expected);
    for (const Sketch& sketch : generate_sketches(dag, ctx, SketchRules::gpu())) {
      for (uint64_t seed = 0; seed < (test::kSanitizedBuild ? 2 : 5); ++seed) {
        std::mt19937_64 rng(seed);
        expect_matches_naive(annotator.annotate(sketch.state, rng), naive, inputs, expected, kernel.name + " on GPU");
      }
    }
  }
}

// `count` CPU programs of the kernel, sampled from its sketches.
std::vector<State> sampled_programs(const std::string& kernel, int count, uint64_t seed) {
  Program program = load_kernels();
  auto dag = std::make_shared<const ComputeDAG>(program.find(kernel)->dag);
  SamplerContext ctx;
  Annotator annotator(ctx);
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::cpu());
  std::mt19937_64 rng(seed);
  std::vector<State> programs;
  for (int i = 0; i < count; ++i) programs.push_back(sample_program(sketches, annotator, rng));
  return programs;
}

TEST(AnnotationTest, SampledProgramsUseEveryAnnotation) {
  std::map<StepKind, int> seen;
  std::map<IterAnnotation, int> annotations;
  for (const State& s : sampled_programs("matmul", 100, 11)) {
    for (const StepPtr& step : s.steps()) {
      ++seen[step->kind()];
      if (auto* a = dynamic_cast<const AnnotateStep*>(step.get())) ++annotations[a->annotation];
    }
  }
  EXPECT_GT(annotations[IterAnnotation::Parallel], 0);
  EXPECT_GT(annotations[IterAnnotation::Vectorize], 0);
  EXPECT_GT(seen[StepKind::Pragma], 0);
  EXPECT_GT(seen[StepKind::LayoutRewrite], 0);
  EXPECT_GT(seen[StepKind::CacheWrite], 0);
  EXPECT_GT(seen[StepKind::ComputeAt], 0);
}

// The tiled stage's innermost loop is drawn among its innermost tile's axes: for the NCHW
// convolution, sometimes the output channels' part instead of the row's, with the local
// accumulators contiguous along it.
TEST(AnnotationTest, TheInnermostLoopOfATileIsDrawnAmongItsAxes) {
  std::map<std::string, int> innermost;
  int channels_contiguous = 0;
  for (const State& s : sampled_programs("conv_bias_relu", 200, 5)) {
    for (int st = 0; st < s.num_stages(); ++st) {
      const Stage& stage = s.stage(st);
      if (stage.relations.empty() || !stage.op->reduction()) continue;
      const std::string name = stage.leaf(static_cast<int>(stage.leaves.size()) - 1).name;
      ++innermost[name.substr(0, name.find('.'))];
      LoweredKernel lowered = lower_state(s, "k");
      const Buffer* acc = lowered.find_buffer(stage.op->name);
      if (name.rfind("i1.", 0) == 0 && acc && acc->scope == BufferScope::Local && acc->shape[1] > 1) {
        EXPECT_EQ(acc->strides[1], 1) << stage.op->name;
        ++channels_contiguous;
      }
    }
  }
  EXPECT_GT(innermost["i3"], 0);  // the row's part, as the sketch orders the tile
  EXPECT_GT(innermost["i1"], 0);  // the output channels' part
  EXPECT_GT(channels_contiguous, 0);
}

TEST(FactorizationTest, EveryFactorisationAppearsNearUniformly) {
  Factorizations f;
  // 12 into two inner lengths with the innermost at most 12: (a, b) with a * b dividing 12.
  const auto& schemes = f.schemes(12, 2, 12);
  std::map<std::vector<int64_t>, int> counts;
  for (const auto& s : schemes) {
    EXPECT_EQ(12 % (s[0] * s[1]), 0);
    counts[s] = 0;
  }
  EXPECT_EQ(schemes.size(), 18u);
  std::mt19937_64 rng(7);
  const int draws = 18000;
  for (int i = 0; i < draws; ++i) ++counts.at(f.sample(12, 2, 12, 0, rng));
  double expected = static_cast<double>(draws) / static_cast<double>(schemes.size());
  for (const auto& [scheme, n] : counts) {
    EXPECT_GT(n, 0.8 * expected) << scheme[0] << "x" << scheme[1];
    EXPECT_LT(n, 1.2 * expected) << scheme[0] << "x" << scheme[1];
  }
}

TEST(FactorizationTest, InnermostFactorIsBounded) {
  Factorizations f;
  for (const auto& s : f.schemes(1024, 3, 16)) EXPECT_LE(s.back(), 16);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    std::vector<int64_t> s = f.sample(97, 2, 64, 0, rng);  // a prime: exact, or ragged from 104
    int64_t product = s[0] * s[1];
    EXPECT_TRUE(97 % product == 0 || 104 % product == 0);
  }
}

// Along a vector axis the innermost length is whole vectors: exact where the extent has such
// divisors, ragged otherwise, with the outer lengths dividing the number of tiles (rounded up a
// little) and a little padding.
TEST(FactorizationTest, AVectorAxisIsSplitIntoWholeVectors) {
  Factorizations f;
  std::mt19937_64 rng(3);
  std::set<int64_t> innermost_1000, innermost_1024;
  int wide_register_tiles = 0;
  for (int i = 0; i < 500; ++i) {
    std::vector<int64_t> s = f.sample(1000, 3, 64, 16, rng);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[2] % 16, 0);
    innermost_1000.insert(s[2]);
    const int64_t padded = padded_extent(1000, s);
    EXPECT_GT(padded, 1000);  // 1000 has no divisor of whole 16-lane vectors
    EXPECT_LE(padded, 1000 + std::max<int64_t>(s[2], 125)) << s[0] << "x" << s[1] << "x" << s[2];
    if (s[1] * s[2] >= 64) ++wide_register_tiles;
    std::vector<int64_t> e = f.sample(1024, 3, 64, 16, rng);
    EXPECT_EQ(e[2] % 16, 0);
    EXPECT_EQ(padded_extent(1024, e), 1024);
    innermost_1024.insert(e[2]);
  }
  EXPECT_EQ(innermost_1000, (std::set<int64_t>{16, 32, 48, 64}));
  EXPECT_EQ(innermost_1024, (std::set<int64_t>{16, 32, 64}));
  EXPECT_GT(wide_register_tiles, 0);
  // An extent under one vector keeps its exact schemes; other axes ignore the vector width.
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(12 % f.sample(12, 1, 64, 16, rng)[0], 0);
    EXPECT_EQ(padded_extent(1000, f.sample(1000, 2, 64, 0, rng)), 1000);
  }
}

// The issue's case: an output row of 1000 (a multiple of 8, not of 16) on a 16-lane target.
// Every sampled program, and every mutation of one, that vectorises the tile along the row does
// so with whole 16-lane vectors, and computes what the naive program computes.
TEST(AnnotationTest, AVectorAxisWithoutWholeVectorDivisorsStillGetsFullWidthVectors) {
  Program program = load_kernels();
  auto dag = std::make_shared<const ComputeDAG>(program.find("matmul_1000")->dag);
  SamplerContext ctx;
  ASSERT_EQ(ctx.vector_lanes, 16);
  Annotator annotator(ctx);
  auto catalog = std::make_shared<const SketchCatalog>(generate_sketches(dag, ctx, SketchRules::cpu()));
  Mutator mutator(ctx, catalog);
  LoweredKernel naive = lower_state(State(dag), "naive");
  std::vector<std::vector<double>> inputs = inputs_for(naive), expected = inputs;
  interpret(naive, expected);
  std::mt19937_64 rng(17);
  int row_vectors = 0, checked = 0;
  auto check = [&](const State& s, const std::string& what) {
    for (int st = 0; st < s.num_stages(); ++st) {
      const Stage& stage = s.stage(st);
      if (stage.is_placeholder() || stage.location == ComputeLocation::Inlined || stage.leaves.empty()) continue;
      const Iterator& last = stage.leaf(static_cast<int>(stage.leaves.size()) - 1);
      if (last.annotation != IterAnnotation::Vectorize || last.name.rfind("j", 0) != 0) continue;
      EXPECT_EQ(last.extent % 16, 0) << what << "\n" << describe_steps(s);
      ++row_vectors;
    }
    if (checked++ < 40) expect_matches_naive(s, naive, inputs, expected, what);
  };
  for (int i = 0; i < 150; ++i) {
    State s = sample_program(catalog->sketches(), annotator, rng);
    check(s, "sample " + std::to_string(i));
    if (std::optional<State> m = mutator.mutate(MutationKind::TileSize, s, rng)) check(*m, "mutation of sample " + std::to_string(i));
  }
  EXPECT_GT(row_vectors, 100);
}

// The loops of a lowered program, outermost first, with the buffers stored inside each.
struct LoopInfo {
  ForKind kind;
  std::set<std::string> stored;
  std::string body;
};

std::set<std::string> collect_loops(const Stmt& s, std::vector<LoopInfo>& loops) {
  std::set<std::string> stored;
  auto visit = [&](const Stmt& x) {
    if (x) stored.merge(collect_loops(x, loops));
  };
  switch (s->kind) {
    case StmtKind::Store: stored.insert(s->as<StoreNode>()->buffer); break;
    case StmtKind::Seq:
      for (const Stmt& x : s->as<SeqNode>()->stmts) visit(x);
      break;
    case StmtKind::IfThenElse:
      visit(s->as<IfThenElseNode>()->then_case);
      visit(s->as<IfThenElseNode>()->else_case);
      break;
    case StmtKind::Allocate: visit(s->as<AllocateNode>()->body); break;
    case StmtKind::For: {
      size_t at = loops.size();
      loops.push_back({s->as<ForNode>()->for_kind, {}, to_string(s)});
      visit(s->as<ForNode>()->body);
      loops[at].stored = stored;
      break;
    }
    case StmtKind::Barrier: break;
  }
  return stored;
}

std::vector<LoopInfo> loops_of(const LoweredKernel& k) {
  std::vector<LoopInfo> loops;
  collect_loops(k.body, loops);
  return loops;
}

bool has_loop(const std::vector<LoopInfo>& loops, ForKind kind, const std::string& stored_prefix, const std::string& text = "") {
  return std::any_of(loops.begin(), loops.end(), [&](const LoopInfo& l) {
    bool stores = std::any_of(l.stored.begin(), l.stored.end(), [&](const std::string& b) { return b.rfind(stored_prefix, 0) == 0; });
    return l.kind == kind && stores && l.body.find(text) != std::string::npos;
  });
}

// The names of the reduction stages of the kernel.
std::vector<std::string> reductions_of(const ComputeDAG& dag) {
  std::vector<std::string> names;
  for (const OpPtr& op : dag.ops())
    if (op->reduction()) names.push_back(op->name);
  return names;
}

constexpr const char* kRowKernels = R"(
kernel softmax {
  X = input f32[8, 1024]
  Y = softmax(X)
}
kernel layer_norm {
  X = input f32[8, 768]
  g = const f32[768]
  b = const f32[768]
  Y = layer_norm(X, g, b)
}
kernel row_norm {
  X = input f32[8, 4096]
  S[i:8] = sqrt(sum(k:4096, X[i, k] * X[i, k]))
}
kernel bias_gelu {
  X = input f32[4096, 1024]
  b = const f32[1024]
  Y = gelu(bias_add(X, b, axis = 1))
}
)";

// Row-wise kernels: some sampled programs run the rows in parallel and vectorise every
// reduction's partial results and the elementwise pass, all inside the row loop.
TEST(AnnotationTest, RowReductionsHaveVectorisedPartialResultsInParallelRows) {
  Program program = test::parse(kRowKernels, "rows.def");
  SamplerContext ctx;
  Annotator annotator(ctx);
  for (const char* name : {"softmax", "layer_norm", "row_norm"}) {
    auto dag = std::make_shared<const ComputeDAG>(program.find(name)->dag);
    std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::cpu());
    std::vector<std::string> reductions = reductions_of(*dag);
    std::mt19937_64 rng(5);
    int vectorised = 0, fused = 0;
    for (int i = 0; i < 200; ++i) {
      std::vector<LoopInfo> loops = loops_of(lower_state(sample_program(sketches, annotator, rng), "k"));
      bool all = std::all_of(reductions.begin(), reductions.end(),
                             [&](const std::string& r) { return has_loop(loops, ForKind::Vectorized, r + ".rf"); });
      if (!all || loops.front().kind != ForKind::Parallel) continue;
      ++vectorised;
      // Fused rows: the parallel loop computes every reduction and the output.
      fused += loops.front().stored.size() >= reductions.size() * 2 + 1;
    }
    EXPECT_GT(vectorised, 0) << name;
    if (reductions.size() > 1) {
      EXPECT_GT(fused, 0) << name;
    }
  }
}

// Memory pragmas go where memory streams: prefetches on the passes of a large softmax that read
// its input (the row maximum's partial results among them) and streaming stores on its output;
// none on a small softmax, and no prefetch on a matmul's product stage, whose tiles reuse its
// inputs from the caches.
TEST(AnnotationTest, MemoryPragmasOnlyWhereMemoryStreams) {
  Program program = test::parse(R"(
kernel big_softmax {
  X = input f32[512, 1024]
  Y = softmax(X)
}
kernel small_softmax {
  X = input f32[8, 1024]
  Y = softmax(X)
}
kernel matmul {
  A = input f32[256, 512]
  B = input f32[512, 512]
  C = matmul(A, B)
}
)");
  SamplerContext ctx;
  Annotator annotator(ctx);
  std::map<std::string, std::map<std::string, int>> prefetched, streamed;
  for (const char* name : {"big_softmax", "small_softmax", "matmul"}) {
    auto dag = std::make_shared<const ComputeDAG>(program.find(name)->dag);
    std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::cpu());
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100; ++i) {
      State s = sample_program(sketches, annotator, rng);
      for (const Stage& st : s.stages()) {
        prefetched[name][st.op->name] += st.pragma(PragmaKind::PrefetchBytes) > 0;
        streamed[name][st.op->name] += st.pragma(PragmaKind::StreamStores);
      }
    }
  }
  EXPECT_GT(prefetched["big_softmax"]["Y.max.rf"], 5);
  EXPECT_GT(streamed["big_softmax"]["Y"], 5);
  for (auto& [stage, n] : prefetched["small_softmax"]) EXPECT_EQ(n, 0) << stage;
  for (auto& [stage, n] : streamed["small_softmax"]) EXPECT_EQ(n, 0) << stage;
  for (auto& [stage, n] : prefetched["matmul"]) EXPECT_EQ(n, 0) << stage;
}

TEST(AnnotationTest, DefaultScheduleOfElementwiseKernelIsParallelAndVectorised) {
  Program program = test::parse(kRowKernels, "rows.def");
  SamplerContext ctx;
  auto dag = std::make_shared<const ComputeDAG>(program.find("bias_gelu")->dag);
  std::vector<LoopInfo> loops = loops_of(lower_state(default_schedule(dag, ctx), "k"));
  EXPECT_TRUE(has_loop(loops, ForKind::Parallel, ""));
  EXPECT_TRUE(has_loop(loops, ForKind::Vectorized, "", "gelu("));
  // The default of a row-wise kernel vectorises its reductions' partial results too.
  auto softmax = std::make_shared<const ComputeDAG>(program.find("softmax")->dag);
  loops = loops_of(lower_state(default_schedule(softmax, ctx), "k"));
  EXPECT_EQ(loops.front().kind, ForKind::Parallel);
  for (const std::string& r : reductions_of(*softmax)) EXPECT_TRUE(has_loop(loops, ForKind::Vectorized, r + ".rf")) << r;
}

TEST(AnnotationTest, ElementwiseSpaceHasParallelVectorLoopsOfTheTargetsLanes) {
  Program program = test::parse(kRowKernels, "rows.def");
  SamplerContext ctx;
  Annotator annotator(ctx);
  auto dag = std::make_shared<const ComputeDAG>(program.find("bias_gelu")->dag);
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::cpu());
  std::mt19937_64 rng(3);
  std::set<std::string> programs;
  int parallel_vector = 0;
  for (int i = 0; i < 50; ++i) {
    State s = sample_program(sketches, annotator, rng);
    programs.insert(describe_steps(s));
    std::vector<LoopInfo> loops = loops_of(lower_state(s, "k"));
    parallel_vector += loops.front().kind == ForKind::Parallel && has_loop(loops, ForKind::Vectorized, "", "gelu(");
  }
  EXPECT_GT(parallel_vector, 25);
  EXPECT_GT(programs.size(), 8u);
}

}  // namespace
}  // namespace ansor
