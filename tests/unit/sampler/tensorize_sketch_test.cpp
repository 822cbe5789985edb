// Sketches of reductions that a tensor intrinsic of the target computes: every tiling of such a
// stage puts the intrinsic's lanes and depth innermost, tensorized; the programs annotated and
// mutated from them keep that tile whole, lower to calls of the intrinsic for a target that has
// it, and compute what the naive program computes. Targets without an intrinsic, and stages
// that no intrinsic computes, are tiled as before. AMX targets tile whole tile rows: one sketch
// per tile count, every program a call per run of reduction steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <string>

#include "lang/program.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "sampler/mutation.h"
#include "sampler/sketch_catalog.h"
#include "sampler/sketch_generator.h"
#include "sampler/sketch_rule.h"
#include "schedule/state_printer.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kTensorizeSketchDef = R"(
kernel dense_bias_relu_bf16 {
  X = input bf16[20, 24]
  W = const bf16[48, 24]
  Bias = const f32[48]
  S[i:20, j:48] = sum(k:24, f32(X[i, k]) * f32(W[j, k]))
  Y[i:20, j:48] = bf16(max(S[i, j] + Bias[j], 0.0))
}
kernel matmul_u8s8 {
  A = input u8[9, 16]
  B = const i8[16, 32]
  C[i:9, j:32] = sum(k:16, i32(A[i, k]) * i32(B[k, j]))
}
kernel matmul_s8u8 {
  A = input i8[9, 8]
  B = const u8[8, 16]
  C[i:9, j:16] = sum(k:8, i32(A[i, k]) * i32(B[k, j]))
}
kernel conv_bf16 {
  X = input bf16[1, 6, 6, 4]
  W = const bf16[3, 3, 4, 16]
  P[n:1, h:8, w:8, c:4] = select(h >= 1 && h < 7 && w >= 1 && w < 7, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:6, w:6, o:16] = sum(rh:3, rw:3, c:4, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
kernel dense_f32 {
  X = input f32[8, 16]
  W = const f32[32, 16]
  Y[i:8, j:32] = sum(k:16, X[i, k] * W[j, k])
}
kernel ragged_bf16 {
  X = input bf16[4, 9]
  W = const bf16[24, 9]
  Y[i:4, j:24] = sum(k:9, f32(X[i, k]) * f32(W[j, k]))
}
kernel ragged_u8s8 {
  A = input u8[5, 30]
  B = const i8[30, 20]
  C[i:5, j:20] = sum(k:30, i32(A[i, k]) * i32(B[k, j]))
}
kernel conv_rgb_bf16 {
  X = input bf16[1, 5, 5, 3]
  W = const bf16[3, 3, 3, 32]
  P[n:1, h:7, w:7, c:3] = select(h >= 1 && h < 6 && w >= 1 && w < 6, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:5, w:5, o:32] = sum(rh:3, rw:3, c:3, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
kernel attention_bf16 {
  Q = input bf16[2, 8, 16]
  K = input bf16[2, 32, 16]
  S[b:2, i:8, j:32] = sum(d:16, f32(Q[b, i, d]) * f32(K[b, j, d]))
}
kernel narrow_bf16 {
  X = input bf16[4, 8]
  W = const bf16[8, 8]
  Y[i:4, j:8] = sum(k:8, f32(X[i, k]) * f32(W[j, k]))
}
)";

const Target& target() {
  static const Target t = parse_target("cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2");
  return t;
}

// What the CPU backend gives the sampler for that target (backend/cpu_backend.cpp).
SamplerContext context_with_intrinsics() {
  SamplerContext ctx = SamplerContext::for_cpu(target());
  ctx.tensor_intrinsics = {{DType::BF16, DType::BF16, DType::F32, 16, 2}, {DType::U8, DType::I8, DType::I32, 16, 4},
                           {DType::I8, DType::U8, DType::I32, 16, 4}};
  return ctx;
}

std::shared_ptr<const ComputeDAG> dag_named(const std::string& kernel) {
  static const Program program = test::parse(kTensorizeSketchDef);
  return test::dag_of(program, kernel);
}

bool tensorizes(const State& s) {
  return std::any_of(s.steps().begin(), s.steps().end(), [](const StepPtr& step) {
    auto* a = dynamic_cast<const AnnotateStep*>(step.get());
    return a && a->annotation == IterAnnotation::Tensorize;
  });
}

LoweredKernel lower_for_target(const State& s) {
  LowerOptions options;
  options.target = target();
  return lower_state(s, "k", options);
}

// Then three ragged ones: 24 and 20 outputs (not whole vectors of 16 lanes), 9, 30 and 3 summed
// (not whole pairs or quads); and a product of two activations, whose rhs the kernel packs.
const std::vector<std::string> kTensorizable = {"dense_bias_relu_bf16", "matmul_u8s8",   "matmul_s8u8",   "conv_bf16",
                                                "ragged_bf16",          "ragged_u8s8",   "conv_rgb_bf16", "attention_bf16"};

TEST(TensorizeSketchTest, EveryTilingOfAMatchingStageIsTensorized) {
  const SamplerContext ctx = context_with_intrinsics();
  for (const std::string& kernel : kTensorizable) {
    std::vector<Sketch> sketches = generate_sketches(dag_named(kernel), ctx, SketchRules::cpu());
    ASSERT_FALSE(sketches.empty()) << kernel;
    for (const Sketch& sk : sketches) EXPECT_TRUE(tensorizes(sk.state)) << kernel << "\n" << describe_steps(sk.state);
  }
  // Plain f32, and 8 outputs (fewer than one call's 16 lanes): tiled as before.
  for (const char* kernel : {"dense_f32", "narrow_bf16"})
    for (const Sketch& sk : generate_sketches(dag_named(kernel), ctx, SketchRules::cpu())) EXPECT_FALSE(tensorizes(sk.state)) << kernel;
  // A target without the instructions: no tensorized sketch.
  for (const Sketch& sk : generate_sketches(dag_named("matmul_u8s8"), SamplerContext::for_cpu(target()), SketchRules::cpu()))
    EXPECT_FALSE(tensorizes(sk.state));
}

TEST(TensorizeSketchTest, AnnotatedAndMutatedProgramsCallTheIntrinsicAndComputeTheNaiveResult) {
  const SamplerContext ctx = context_with_intrinsics();
  Annotator annotator(ctx);
  for (const std::string& kernel : kTensorizable) {
    const LoweredKernel naive = lower_state(State(dag_named(kernel)), "naive");
    auto catalog = std::make_shared<const SketchCatalog>(generate_sketches(dag_named(kernel), ctx, SketchRules::cpu()));
    Mutator mutator(ctx, catalog);
    std::mt19937_64 rng(3);
    int programs = 0;
    for (int draw = 0; draw < 12; ++draw) {
      State program = sample_program(catalog->sketches(), annotator, rng);
      for (int generation = 0; generation < 3; ++generation) {
        const LoweredKernel k = lower_for_target(program);
        EXPECT_FALSE(k.tensor_calls.empty()) << kernel << "\n" << describe_steps(program) << to_string(k);
        EXPECT_TRUE(test::computes_like(naive, k)) << kernel << "\n" << describe_steps(program);
        ++programs;
        std::optional<State> mutated = mutator.mutate(program, rng);
        if (!mutated) break;
        program = *mutated;
      }
    }
    EXPECT_GE(programs, 12) << kernel;
    // The default schedule is one of them.
    const LoweredKernel k = lower_for_target(default_schedule(dag_named(kernel), ctx));
    EXPECT_FALSE(k.tensor_calls.empty()) << kernel << "\n" << to_string(k);
    EXPECT_TRUE(test::computes_like(naive, k)) << kernel;
  }
}

TEST(TensorizeSketchTest, AvxVnniTargetsComputeIntegerProductsEightLanesAtATime) {
  const Target avx2 = parse_target("cpu:x86_64:alderlake:avx2+avxvnni:t2");
  SamplerContext ctx = SamplerContext::for_cpu(avx2);
  ctx.tensor_intrinsics = {{DType::U8, DType::I8, DType::I32, 8, 4}, {DType::I8, DType::U8, DType::I32, 8, 4}};
  Annotator annotator(ctx);
  LowerOptions options;
  options.target = avx2;
  for (const char* kernel : {"matmul_u8s8", "matmul_s8u8"}) {
    const LoweredKernel naive = lower_state(State(dag_named(kernel)), "naive");
    const std::vector<Sketch> sketches = generate_sketches(dag_named(kernel), ctx, SketchRules::cpu());
    std::mt19937_64 rng(5);
    for (int draw = 0; draw < 12; ++draw) {
      const State program = sample_program(sketches, annotator, rng);
      const LoweredKernel k = lower_state(program, "k", options);
      ASSERT_FALSE(k.tensor_calls.empty()) << kernel << "\n" << describe_steps(program) << to_string(k);
      EXPECT_EQ(k.tensor_calls.begin()->second.intrinsic->name.rfind("avxvnni_dot4x8_", 0), 0u) << kernel;
      EXPECT_TRUE(test::computes_like(naive, k)) << kernel << "\n" << describe_steps(program);
    }
  }
}

constexpr const char* kAmxDef = R"(
kernel dense_bias_relu_bf16 {
  X = input bf16[32, 64]
  W = const bf16[64, 64]
  Bias = const f32[64]
  S[i:32, j:64] = sum(k:64, f32(X[i, k]) * f32(W[j, k]))
  Y[i:32, j:64] = bf16(max(S[i, j] + Bias[j], 0.0))
}
kernel matmul_u8s8 {
  A = input u8[16, 128]
  B = const i8[128, 32]
  C[i:16, j:32] = sum(k:128, i32(A[i, k]) * i32(B[k, j]))
}
kernel matmul_s8s8 {
  A = input i8[32, 64]
  B = const i8[64, 16]
  C[i:32, j:16] = sum(k:64, i32(A[i, k]) * i32(B[k, j]))
}
kernel batch_matmul_bf16 {
  A = input bf16[2, 16, 32]
  B = const bf16[2, 32, 32]
  C[b:2, i:16, j:32] = sum(k:32, f32(A[b, i, k]) * f32(B[b, k, j]))
}
kernel activations_u8s8 {
  A = input u8[16, 128]
  B = input i8[128, 32]
  C[i:16, j:32] = sum(k:128, i32(A[i, k]) * i32(B[k, j]))
}
kernel rows_of_ten_bf16 {
  X = input bf16[20, 32]
  W = const bf16[16, 32]
  Y[i:20, j:16] = sum(k:32, f32(X[i, k]) * f32(W[j, k]))
}
kernel ragged_outputs_bf16 {
  X = input bf16[16, 64]
  W = const bf16[40, 64]
  Y[i:16, j:40] = sum(k:64, f32(X[i, k]) * f32(W[j, k]))
}
kernel prime_rows_bf16 {
  X = input bf16[17, 32]
  W = const bf16[16, 32]
  Y[i:17, j:16] = sum(k:32, f32(X[i, k]) * f32(W[j, k]))
}
kernel conv_bf16 {
  X = input bf16[1, 3, 14, 32]
  W = const bf16[3, 3, 32, 32]
  P[n:1, h:5, w:16, c:32] = select(h >= 1 && h < 4 && w >= 1 && w < 15, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:3, w:14, o:32] = sum(rh:3, rw:3, c:32, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
kernel conv_u8s8 {
  X = input u8[1, 2, 7, 64]
  W = const i8[3, 3, 64, 16]
  P[n:1, h:4, w:9, c:64] = select(h >= 1 && h < 3 && w >= 1 && w < 8, X[n, h - 1, w - 1, c], u8(0))
  C[n:1, h:2, w:7, o:16] = sum(rh:3, rw:3, c:64, i32(P[n, h + rh, w + rw, c]) * i32(W[rh, rw, c, o]))
}
)";

const Target& amx_target() {
  static const Target t = parse_target("cpu:x86_64:sapphirerapids:avx512+amx-bf16+amx-int8+amx-tile+avx512bf16+avx512vnni:t2");
  return t;
}

// What the CPU backend gives the sampler for that target: the tile rows (every tile count, tiles
// of 16 rows down to 4), then the dot products.
SamplerContext amx_context() {
  SamplerContext ctx = SamplerContext::for_cpu(amx_target());
  for (const auto& [lhs, rhs, out, depth] : {std::tuple{DType::BF16, DType::BF16, DType::F32, 2}, std::tuple{DType::U8, DType::I8, DType::I32, 4},
                                             std::tuple{DType::I8, DType::I8, DType::I32, 4}})
    for (int64_t tile_rows = 16; tile_rows >= 4; --tile_rows)
      for (int64_t tiles : {2, 1})
        for (int64_t lanes : {32, 16}) ctx.tensor_intrinsics.push_back({lhs, rhs, out, lanes, depth, tiles * tile_rows, tile_rows});
  ctx.tensor_intrinsics.push_back({DType::BF16, DType::BF16, DType::F32, 16, 2});
  return ctx;
}

std::shared_ptr<const ComputeDAG> amx_dag(const std::string& kernel) {
  static const Program program = test::parse(kAmxDef);
  return test::dag_of(program, kernel);
}

// The names of the rows a lowered program calls.
std::vector<std::string> called_rows(const LoweredKernel& k) {
  std::vector<std::string> names;
  for (const auto& [loop, call] : k.tensor_calls) names.push_back(call.intrinsic->name);
  return names;
}

TEST(TensorizeSketchTest, AmxTilesEveryCountOfTileRowsTheExtentsHold) {
  const SamplerContext ctx = amx_context();
  // 32 rows and 64 outputs: 2 × 2, 2 × 1, 1 × 2, 1 × 1 tiles, each fused at two levels.
  const std::vector<Sketch> sketches = generate_sketches(amx_dag("dense_bias_relu_bf16"), ctx, SketchRules::cpu());
  EXPECT_EQ(sketches.size(), 8u);
  std::set<std::string> rows;
  LowerOptions options;
  options.target = amx_target();
  Annotator annotator(ctx);
  std::mt19937_64 rng(1);
  for (const Sketch& sk : sketches) {
    ASSERT_TRUE(tensorizes(sk.state)) << describe_steps(sk.state);
    const LoweredKernel k = lower_state(annotator.annotate(sk.state, rng), "k", options);
    for (const std::string& name : called_rows(k)) rows.insert(name);
  }
  EXPECT_EQ(rows, (std::set<std::string>{"amx_bf16_16x16", "amx_bf16_16x32", "amx_bf16_32x16", "amx_bf16_32x32"}));
  // 16 rows of u8: only one tile of rows.
  for (const Sketch& sk : generate_sketches(amx_dag("matmul_u8s8"), ctx, SketchRules::cpu())) EXPECT_TRUE(tensorizes(sk.state));
}

TEST(TensorizeSketchTest, AmxProgramsCallTileRowsAndComputeTheNaiveResult) {
  const SamplerContext ctx = amx_context();
  Annotator annotator(ctx);
  LowerOptions options;
  options.target = amx_target();
  for (const char* kernel :
       {"dense_bias_relu_bf16", "matmul_u8s8", "matmul_s8s8", "batch_matmul_bf16", "activations_u8s8", "rows_of_ten_bf16", "conv_bf16", "conv_u8s8",
        "ragged_outputs_bf16"}) {
    const LoweredKernel naive = lower_state(State(amx_dag(kernel)), "naive");
    auto catalog = std::make_shared<const SketchCatalog>(generate_sketches(amx_dag(kernel), ctx, SketchRules::cpu()));
    Mutator mutator(ctx, catalog);
    std::mt19937_64 rng(7);
    for (int draw = 0; draw < (test::kSanitizedBuild ? 3 : 6); ++draw) {
      State program = sample_program(catalog->sketches(), annotator, rng);
      for (int generation = 0; generation < 3; ++generation) {
        const LoweredKernel k = lower_state(program, "k", options);
        const std::vector<std::string> rows = called_rows(k);
        ASSERT_FALSE(rows.empty()) << kernel << "\n" << describe_steps(program) << to_string(k);
        for (const std::string& row : rows) EXPECT_EQ(row.rfind("amx_", 0), 0u) << kernel << ": " << row;
        EXPECT_TRUE(test::computes_like(naive, k)) << kernel << "\n" << describe_steps(program);
        std::optional<State> mutated = mutator.mutate(program, rng);
        if (!mutated) break;
        program = *mutated;
      }
    }
    const LoweredKernel k = lower_state(default_schedule(amx_dag(kernel), ctx), "k", options);
    ASSERT_FALSE(called_rows(k).empty()) << kernel << "\n" << to_string(k);
    EXPECT_TRUE(test::computes_like(naive, k)) << kernel;
  }
  // 17 rows are no whole number of tiles of 4 to 16 rows: the dot product computes them.
  const LoweredKernel k = lower_state(default_schedule(amx_dag("prime_rows_bf16"), ctx), "k", options);
  const std::vector<std::string> rows = called_rows(k);
  ASSERT_FALSE(rows.empty()) << to_string(k);
  for (const std::string& row : rows) EXPECT_EQ(row, "avx512bf16_dot2x16");
}

// Rows that are no multiple of 16 are tiled by the most rows per tile that divide them: 20 rows
// as tiles of 10, a convolution's 14 and 7 pixels as tiles of 14 and 7, whose tiles read the
// padded input from a buffer the tile computes (its selects vary along the rows).
TEST(TensorizeSketchTest, AmxTilesOfFewerRowsTakeTheMostRowsThatDivide) {
  const SamplerContext ctx = amx_context();
  LowerOptions options;
  options.target = amx_target();
  Annotator annotator(ctx);
  for (const auto& [kernel, expected] :
       {std::pair<std::string, std::set<std::string>>{"rows_of_ten_bf16", {"amx_bf16_20x16_r10", "amx_bf16_10x16_r10"}},
        {"conv_bf16", {"amx_bf16_14x16_r14", "amx_bf16_14x32_r14"}},
        {"conv_u8s8", {"amx_u8s8_7x16_r7"}}}) {
    std::set<std::string> rows;
    std::mt19937_64 rng(3);
    for (const Sketch& sk : generate_sketches(amx_dag(kernel), ctx, SketchRules::cpu())) {
      ASSERT_TRUE(tensorizes(sk.state)) << kernel << "\n" << describe_steps(sk.state);
      for (const std::string& name : called_rows(lower_state(annotator.annotate(sk.state, rng), "k", options))) rows.insert(name);
      if (kernel.rfind("conv", 0) != 0) continue;
      const int padding = sk.state.find_stage("P");
      EXPECT_EQ(sk.state.stage(padding).location, ComputeLocation::At) << describe_steps(sk.state);
    }
    EXPECT_EQ(rows, expected) << kernel;
  }
}

}  // namespace
}  // namespace ansor
