// The tensor cores' warp rows (lower/mma_intrinsics.cpp): offered to sm_80 and later only; each
// computes its lane's nest (TF32 rows on operands rounded by tf32(), which only they take); lowering finds the call of a sampled warp tile, with the distance
// between the lanes' columns, only where the warp's lanes hold the instruction's fragments
// (a tile whose lanes are numbered otherwise stays loops); the programs compute what the naive
// program computes and the CUDA generator prints the calls.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda_codegen.h"
#include "codegen/kernel_signature.h"
#include "lang/program.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "lower/tensor_intrinsic.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "sampler/sketch_rule.h"
#include "schedule/state.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "test_support.h"
#include "warp_rows.h"

namespace ansor {
namespace {

constexpr const char* kWarpTensorizeDef = R"(
kernel matmul_f16 {
  A = input f16[64, 32]
  B = input f16[32, 48]
  C[i:64, j:48] = sum(k:32, f32(A[i, k]) * f32(B[k, j]))
}
kernel dense_bf16_relu {
  X = input bf16[32, 64]
  W = input bf16[32, 64]
  Bias = input f32[32]
  Y[i:32, j:32] = max(sum(k:64, f32(X[i, k]) * f32(W[j, k])) + Bias[j], 0.0)
}
kernel ragged_f16 {
  A = input f16[40, 32]
  B = input f16[32, 20]
  C[i:40, j:20] = sum(k:32, f32(A[i, k]) * f32(B[k, j]))
}
kernel ragged_bf16_relu {
  X = input bf16[50, 48]
  W = input bf16[36, 48]
  Y[i:50, j:36] = max(sum(k:48, f32(X[i, k]) * f32(W[j, k])), 0.0)
}
kernel ragged_k_f16 {
  A = input f16[40, 40]
  B = input f16[40, 24]
  C[i:40, j:24] = sum(k:40, f32(A[i, k]) * f32(B[k, j]))
}
kernel ragged_k_tf32 {
  A = input f32[32, 20]
  B = input f32[20, 16]
  C[i:32, j:16] = sum(k:20, tf32(A[i, k]) * tf32(B[k, j]))
}
kernel k_short_of_a_row {
  A = input f16[32, 48]
  B = input f16[40, 16]
  C[i:32, j:16] = sum(k:40, f32(A[i, k]) * f32(B[k, j]))
}
kernel matmul_tf32 {
  A = input f32[48, 24]
  B = input f32[24, 32]
  C[i:48, j:32] = sum(k:24, tf32(A[i, k]) * tf32(B[k, j]))
}
kernel matmul_f32 {
  A = input f32[48, 24]
  B = input f32[24, 32]
  C[i:48, j:32] = sum(k:24, A[i, k] * B[k, j])
}
kernel conv_bf16_nhwc {
  X = input bf16[1, 3, 18, 32]
  W = input bf16[3, 3, 32, 16]
  P[n:1, h:5, w:20, c:32] = select(h >= 1 && h < 4 && w >= 1 && w < 19, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:3, w:18, o:16] = sum(rh:3, rw:3, c:32, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
)";

std::shared_ptr<const ComputeDAG> warp_tensorize_dag(const std::string& kernel) {
  static const Program program = test::parse(kWarpTensorizeDef);
  return test::dag_of(program, kernel);
}

TEST(WarpTensorizeTest, RowsAreOfferedToTensorCoreArchitectures) {
  // f16, bf16 and TF32, 1, 2 or 4 tiles of 16 rows by 1, 2 or 4 tiles of 8 columns per warp.
  ASSERT_EQ(cuda_tensor_intrinsics().size(), 27u);
  EXPECT_TRUE(tensor_intrinsics_for(parse_target("cuda:sm_75")).empty());
  EXPECT_EQ(tensor_intrinsics_for(test::sm80()).size(), 27u);
  EXPECT_EQ(tensor_intrinsics_for(parse_target("cuda:sm_90")).size(), 27u);
  for (const TensorIntrinsic* row : tensor_intrinsics_for(parse_target("cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2")))
    EXPECT_EQ(row->warp_m_tiles, 0) << row->name;
  const TensorIntrinsic* row = find_tensor_intrinsic("mma_bf16_m32n16");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->warp_m_tiles, 2);
  EXPECT_EQ(row->warp_n_tiles, 2);
  const TensorIntrinsic* tf32 = find_tensor_intrinsic("mma_tf32_m16n32");
  ASSERT_NE(tf32, nullptr);
  EXPECT_TRUE(tf32->tf32_operands);
  EXPECT_EQ(tf32->extents.front(), 8) << "m16n8k8: 8 steps of k";
}

// 16-bit encodings of values with at most 8 significant bits and no smaller than 2^-14 (exact in
// both), and back: bf16 is f32's upper half; f16 rebiases the exponent from 127 to 15.
uint16_t bits_of(float v, bool bf16) {
  const uint32_t f = std::bit_cast<uint32_t>(v);
  if (bf16) return static_cast<uint16_t>(f >> 16);
  if (v == 0) return static_cast<uint16_t>((f >> 16) & 0x8000u);
  return static_cast<uint16_t>(((f >> 16) & 0x8000u) | ((((f >> 23) & 0xffu) - 127 + 15) << 10) | ((f >> 13) & 0x3ffu));
}
float value_of(uint16_t x, bool bf16) {
  if (bf16) return std::bit_cast<float>(static_cast<uint32_t>(x) << 16);
  if ((x & 0x7fffu) == 0) return (x & 0x8000u) ? -0.0f : 0.0f;
  return std::bit_cast<float>(((x & 0x8000u) << 16) | ((((x >> 10) & 0x1fu) - 15 + 127) << 23) | ((x & 0x3ffu) << 13));
}

// A call of the row whose open strides are odd and differ between the operands.
IntrinsicCallShape odd_strided_call(const TensorIntrinsic& row) {
  IntrinsicCallShape shape;
  shape.extents = row.extents;
  auto strides = [](const IntrinsicOperand& o, int64_t first) {
    std::vector<int64_t> out;
    for (int64_t s : o.strides) out.push_back(s == kAnyStride ? first++ * 37 + 1 : s);
    return out;
  };
  shape.lhs_strides = strides(row.lhs, 1);
  shape.rhs_strides = strides(row.rhs, 2);
  shape.out_strides = strides(row.out, 3);
  return shape;
}

// Each row's interpretation: out[mi, h, nj, c] += sum over k of lhs[k, mi, h] * rhs[k, nj, c],
// addressed by odd strides, in the row's element type.
TEST(WarpTensorizeTest, EveryRowComputesItsLanesNest) {
  std::mt19937_64 rng(5);
  for (const TensorIntrinsic& row : cuda_tensor_intrinsics()) {
    if (row.tf32_operands) continue;  // TF32's rounding: Tf32RowsRoundTheirOperands
    const bool bf16 = row.lhs.dtype == DType::BF16;
    const IntrinsicCallShape shape = odd_strided_call(row);
    std::vector<uint16_t> lhs(static_cast<size_t>(operand_span(shape, shape.lhs_strides)));
    std::vector<uint16_t> rhs(static_cast<size_t>(operand_span(shape, shape.rhs_strides)));
    std::vector<float> out(static_cast<size_t>(operand_span(shape, shape.out_strides)), 0.5f);
    for (auto* operand : {&lhs, &rhs})
      for (uint16_t& x : *operand) x = bits_of(static_cast<float>(std::uniform_int_distribution<int>(-64, 64)(rng)) / 32, bf16);
    std::vector<double> expected(out.begin(), out.end());
    for_each_nest_point(shape, [&](int64_t l, int64_t r, int64_t o) { expected[o] += double{value_of(lhs[l], bf16)} * value_of(rhs[r], bf16); });
    row.interpret(lhs.data(), rhs.data(), out.data(), shape);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(double{out[i]}, expected[i]) << row.name << " element " << i;
  }
}

// A TF32 row's nest sums products of operands rounded to 10 mantissa bits: values exact in TF32,
// made inexact below half a unit, give the exact values' products.
TEST(WarpTensorizeTest, Tf32RowsRoundTheirOperands) {
  for (const TensorIntrinsic& row : cuda_tensor_intrinsics()) {
    if (!row.tf32_operands) continue;
    const IntrinsicCallShape shape = odd_strided_call(row);
    std::vector<float> lhs(static_cast<size_t>(operand_span(shape, shape.lhs_strides)));
    std::vector<float> rhs(static_cast<size_t>(operand_span(shape, shape.rhs_strides)));
    std::vector<float> out(static_cast<size_t>(operand_span(shape, shape.out_strides)), 0.5f);
    std::vector<double> exact_lhs(lhs.size()), exact_rhs(rhs.size());
    std::mt19937_64 rng(6);
    for (auto [operand, exact] : {std::pair{&lhs, &exact_lhs}, std::pair{&rhs, &exact_rhs}})
      for (size_t i = 0; i < operand->size(); ++i) {
        (*exact)[i] = static_cast<double>(std::uniform_int_distribution<int>(-64, 64)(rng)) / 32;
        (*operand)[i] = static_cast<float>((*exact)[i] * (1 + 0x1p-14));
      }
    std::vector<double> expected(out.begin(), out.end());
    for_each_nest_point(shape, [&](int64_t l, int64_t r, int64_t o) { expected[o] += exact_lhs[l] * exact_rhs[r]; });
    row.interpret(lhs.data(), rhs.data(), out.data(), shape);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(double{out[i]}, expected[i]) << row.name << " element " << i;
  }
}

// Sampled programs of each kernel are warp tiles whose nests lower to calls (the fused thread
// loop numbers lane 4g + t) and compute the naive result; the CUDA generator prints the calls.
// Rows and columns that are no whole number of tiles (ragged_*) too: the last tiles compute past
// the tensor's edges, unguarded, and only their copy-out is guarded; a reduction that is no
// whole number of steps (ragged_k_*), whose last step sums the zeros the shared copies hold past
// it (the interpreter's unwritten elements are NaNs: a step that read one would spoil the sums);
// and an NHWC convolution, whose warps' rows are pixels read from the shared copy of its padded
// input.
TEST(WarpTensorizeTest, SampledWarpTilesAreCallsThatComputeTheNaiveResult) {
  const SamplerContext ctx = test::gpu_context_with_warp_rows(test::sm80());
  const std::map<std::string, std::pair<DType, std::string>> kernels = {
      {"matmul_f16", {DType::F16, "mma_f16_f32<"}},       {"dense_bf16_relu", {DType::BF16, "mma_bf16_f32<"}},
      {"ragged_f16", {DType::F16, "mma_f16_f32<"}},       {"ragged_bf16_relu", {DType::BF16, "mma_bf16_f32<"}},
      {"ragged_k_f16", {DType::F16, "mma_f16_f32<"}},     {"ragged_k_tf32", {DType::F32, "mma_tf32_f32<"}},
      {"conv_bf16_nhwc", {DType::BF16, "mma_bf16_f32<"}}, {"matmul_tf32", {DType::F32, "mma_tf32_f32<"}}};
  for (const auto& [kernel, expected] : kernels) {
    const auto dag = warp_tensorize_dag(kernel);
    const LoweredKernel naive = lower_state(State(dag), "naive");
    for (uint64_t seed = 0; seed < (test::kSanitizedBuild ? 3 : 6); ++seed) {
      const State s = random_program(dag, ctx, seed);
      const LoweredKernel k = test::lower_for(s, test::sm80());
      ASSERT_FALSE(k.tensor_calls.empty()) << kernel << " seed " << seed << "\n" << to_string(k);
      for (const auto& [loop, call] : k.tensor_calls) {
        EXPECT_EQ(call.intrinsic->lhs.dtype, expected.first);
        EXPECT_EQ(call.guard, nullptr);
      }
      EXPECT_TRUE(test::computes_like(naive, k)) << kernel << " seed " << seed << "\n" << describe_steps(s);
      const std::string text = emit_cuda_kernel(k, kernel_params(*dag), "k");
      EXPECT_NE(text.find("ansor_rt::" + expected.second), std::string::npos) << text;
    }
  }
}

// A reduction that is no whole number of steps is tensorized only where both operands end with
// it: A's rows here run on past k's end, so that its shared copy holds A's elements there, not
// zeros. The kernel is tiled for the f32 pipes, as any kernel without a warp row.
TEST(WarpTensorizeTest, RaggedReductionsThatOperandsRunPastStayOffTensorCores) {
  const SamplerContext ctx = test::gpu_context_with_warp_rows(test::sm80());
  const auto dag = warp_tensorize_dag("k_short_of_a_row");
  EXPECT_TRUE(tensorize_choices(ctx, State(dag), State(dag).find_stage("C")).empty());
  EXPECT_FALSE(tensorize_choices(ctx, State(warp_tensorize_dag("ragged_k_f16")), State(warp_tensorize_dag("ragged_k_f16")).find_stage("C")).empty());
  for (uint64_t seed = 0; seed < 3; ++seed) {
    const LoweredKernel k = test::lower_for(random_program(dag, ctx, seed), test::sm80());
    EXPECT_TRUE(k.tensor_calls.empty()) << "seed " << seed;
    EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k)) << "seed " << seed;
  }
}

// The default program of a ragged reduction: its k steps are calls, with no guard between them
// (the last step sums zeros); A's shared copy is fetched in vectors of 8 halves, which store
// zeros past k's end (40, an edge between whole vectors), printed as one vector copy or zero
// each; B's rows past k's end are zeros too, each half copied as bits or +0's bits.
TEST(WarpTensorizeTest, TheFetchOfARaggedReductionStoresZerosPastItsEnd) {
  const auto dag = warp_tensorize_dag("ragged_k_f16");
  const LoweredKernel k = test::lower_for(default_schedule(dag, test::gpu_context_with_warp_rows(test::sm80())), test::sm80());
  // k's three steps of 16, unrolled: the third reads 8 rows of zeros.
  ASSERT_EQ(k.tensor_calls.size(), 3u) << to_string(k);
  for (const auto& [loop, call] : k.tensor_calls) EXPECT_EQ(call.guard, nullptr);
  std::vector<const VectorCopy*> zero_filling;
  for (const auto& [loop, copy] : k.vector_copies)
    if (copy.copies_if) zero_filling.push_back(&copy);
  ASSERT_FALSE(zero_filling.empty()) << to_string(k);
  for (const VectorCopy* copy : zero_filling) EXPECT_EQ(copy->lanes, 8);
  const std::string text = emit_cuda_kernel(k, kernel_params(*dag), "k");
  EXPECT_NE(text.find("ansor_rt::copy_vector_or_zero<8, "), std::string::npos) << text;
  EXPECT_NE(text.find(" : uint16_t{0});"), std::string::npos) << text;
  EXPECT_EQ(text.find("f32_to_f16"), std::string::npos) << "no half goes through f32\n" << text;
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k));
}

// The same tile with its lanes numbered 8t + g (the lane loops swapped before they are fused):
// no lane holds the fragments the instruction takes from it, so the nest stays loops, which
// still compute the naive result.
TEST(WarpTensorizeTest, LanesNumberedOtherwiseStayLoops) {
  const SamplerContext ctx = test::gpu_context_with_warp_rows(test::sm80());
  const auto dag = warp_tensorize_dag("matmul_f16");
  const State s = random_program(dag, ctx, 1);
  const LoweredKernel k = test::lower_for(s, test::sm80());
  ASSERT_EQ(k.tensor_calls.size(), 1u) << to_string(k);
  // B's columns of lanes t and t + 1: two columns apart in B's shared copy.
  EXPECT_EQ(k.tensor_calls.begin()->second.shape.rhs_lane_stride % 2, 0);

  // The consumer's reorder puts its lane loops g and t right before its nest of [mi,] h, [nj,] c.
  std::vector<StepPtr> steps = s.steps();
  const int consumer = s.find_stage("C");
  int reorder = -1;
  for (size_t i = 0; i < steps.size(); ++i)
    if (auto* r = dynamic_cast<const ReorderStep*>(steps[i].get()); r && r->stage == consumer) reorder = static_cast<int>(i);
  ASSERT_GE(reorder, 0) << describe_steps(s);
  std::vector<int> order = static_cast<const ReorderStep&>(*steps[reorder]).order;
  const State before = replay(dag, std::vector<StepPtr>(steps.begin(), steps.begin() + reorder));
  const Stage& c = before.stage(consumer);
  size_t g = order.size(), t = order.size();
  for (size_t p = 0; p < order.size(); ++p) {
    const std::string& name = c.iters[c.leaves[order[p]]].name;
    if (name == "i.1.0") g = p;
    if (name == "j.1.0") t = p;
  }
  ASSERT_TRUE(g < order.size() && t == g + 1) << describe_steps(s);
  std::swap(order[g], order[t]);
  steps[reorder] = std::make_shared<ReorderStep>(consumer, order);
  const LoweredKernel swapped = test::lower_for(replay(dag, steps), test::sm80());
  EXPECT_TRUE(swapped.tensor_calls.empty()) << to_string(swapped);
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), swapped));
}

// Without tf32(), f32 products are never tensorized: TF32 is only ever the kernel's choice.
TEST(WarpTensorizeTest, F32ProductsWithoutTf32StayExact) {
  const SamplerContext ctx = test::gpu_context_with_warp_rows(test::sm80());
  for (uint64_t seed = 0; seed < 4; ++seed)
    EXPECT_TRUE(test::lower_for(random_program(warp_tensorize_dag("matmul_f32"), ctx, seed), test::sm80()).tensor_calls.empty()) << "seed " << seed;
}

// sm_75 has no m16n8k16: the same kernel's programs there are the SSSRRSRS tiles of f32 pipes.
TEST(WarpTensorizeTest, OlderArchitecturesTileWithoutTensorCores) {
  const Target sm75 = parse_target("cuda:sm_75");
  const SamplerContext ctx = test::gpu_context_with_warp_rows(sm75);
  EXPECT_TRUE(ctx.tensor_intrinsics.empty());
  const LoweredKernel k = test::lower_for(random_program(warp_tensorize_dag("matmul_f16"), ctx, 0), sm75);
  EXPECT_TRUE(k.tensor_calls.empty());
}

}  // namespace
}  // namespace ansor
