// Tensorized loops: each row of the CPU table computes what its strides say; lowering finds the
// call of a tensorized nest where the target has the row (and only there), with a padding's
// condition as its guard; the interpreter runs the row's own arithmetic, and the C++ generator
// prints the call. Every program is checked against the naive program on inputs exact in their
// element types.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/cpp_codegen.h"
#include "codegen/kernel_signature.h"
#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "lower/tensor_intrinsic.h"
#include "sampler/default_schedule.h"
#include "sampler/sampler_context.h"
#include "schedule/state.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kTensorizeDef = R"(
kernel dense_bf16 {
  X = input bf16[6, 12]
  W = const bf16[32, 12]
  Y[i:6, j:32] = sum(k:12, f32(X[i, k]) * f32(W[j, k]))
}
kernel matmul_u8s8 {
  A = input u8[5, 8]
  B = const i8[8, 16]
  C[i:5, j:16] = sum(k:8, i32(A[i, k]) * i32(B[k, j]))
}
kernel conv_bf16 {
  X = input bf16[1, 4, 4, 2]
  W = const bf16[3, 3, 2, 16]
  P[n:1, h:6, w:6, c:2] = select(h >= 1 && h < 5 && w >= 1 && w < 5, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:4, w:4, o:16] = sum(rh:3, rw:3, c:2, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
)";

const Target& with_dot_products() {
  static const Target t = parse_target("cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2");
  return t;
}
const Target& without_them() {
  static const Target t = parse_target("cpu:x86_64:znver4:avx512:t2");
  return t;
}

std::shared_ptr<const ComputeDAG> tensorize_dag(const std::string& kernel) {
  static const Program program = test::parse(kTensorizeDef);
  return test::dag_of(program, kernel);
}

// The stage's innermost output axis split by `lanes` and its reduction axis `k_axis` by `depth`,
// the two inner parts last and the lanes tensorized; the const input packed, a padding P inlined.
State tensorized(const std::string& kernel, const std::string& stage, int k_axis, int64_t lanes, int64_t depth, const std::string& weights) {
  State s(tensorize_dag(kernel));
  const int st = s.find_stage(stage);
  const int spatial = s.stage(st).num_spatial_roots();
  const int lanes_at = spatial, depth_at = spatial + 2 + k_axis;  // the inner parts, once both are split
  s.apply(std::make_shared<SplitStep>(st, spatial - 1, std::vector<int64_t>{lanes}));
  s.apply(std::make_shared<SplitStep>(st, depth_at - 1, std::vector<int64_t>{depth}));
  const int loops = static_cast<int>(s.stage(st).leaves.size());
  std::vector<int> order;
  for (int p = 0; p < loops; ++p)
    if (p != lanes_at && p != depth_at) order.push_back(p);
  order.push_back(lanes_at);
  order.push_back(depth_at);
  s.apply(std::make_shared<ReorderStep>(st, order));
  s.apply(std::make_shared<AnnotateStep>(st, loops - 2, IterAnnotation::Tensorize));
  s.apply(std::make_shared<LayoutRewriteStep>(s.find_stage(weights)));
  if (const int padding = s.find_stage("P"); padding >= 0) s.apply(std::make_shared<ComputeInlineStep>(padding));
  return s;
}

// The outputs of `k` equal those of the naive program on the same inputs.
void expect_naive_result(const std::string& kernel, const LoweredKernel& k) {
  EXPECT_TRUE(test::computes_like(lower_state(State(tensorize_dag(kernel)), "naive"), k)) << to_string(k);
}

// bf16 bit patterns of values with at most 8 significant bits (exact), and back.
uint16_t bf16_bits(float x) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16); }
double value_of(uint16_t bf16) { return std::bit_cast<float>(static_cast<uint32_t>(bf16) << 16); }
double value_of(uint8_t x) { return x; }
double value_of(int8_t x) { return x; }

template <class T>
std::vector<T> random_elements(size_t n, std::mt19937_64& rng) {
  std::vector<T> out(n);
  for (T& x : out) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      x = bf16_bits(static_cast<float>(std::uniform_int_distribution<int>(-128, 128)(rng)) / 64);
    } else {
      x = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
    }
  }
  return out;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A call of the row: 2 steps where it takes any number, rows 73 elements apart (more than the
// 64 of a row of 2 steps, and odd) where it takes any row stride.
IntrinsicCallShape call_shape(const TensorIntrinsic& row) {
  IntrinsicCallShape shape;
  for (int64_t e : row.extents) shape.extents.push_back(e == kAnyExtent ? 2 : e);
  auto strides = [](const IntrinsicOperand& o) {
    std::vector<int64_t> out = o.strides;
    std::replace(out.begin(), out.end(), kAnyStride, int64_t{73});
    return out;
  };
  shape.lhs_strides = strides(row.lhs);
  shape.rhs_strides = strides(row.rhs);
  shape.out_strides = strides(row.out);
  return shape;
}

// out[o] += sum of lhs[l] * rhs[r] over the row's nest, addresses by the call's strides; the
// elements between the rows the call addresses unchanged.
template <class L, class R, class O>
void expect_row_meaning(const TensorIntrinsic& row) {
  std::mt19937_64 rng(11);
  const IntrinsicCallShape shape = call_shape(row);
  const std::vector<L> lhs = random_elements<L>(static_cast<size_t>(operand_span(shape, shape.lhs_strides)), rng);
  const std::vector<R> rhs = random_elements<R>(static_cast<size_t>(operand_span(shape, shape.rhs_strides)), rng);
  std::vector<O> out(static_cast<size_t>(operand_span(shape, shape.out_strides)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<O>(i) - 3;
  std::vector<double> expected(out.begin(), out.end());
  std::vector<int64_t> at(shape.extents.size(), 0);
  for (size_t a = at.size();;) {
    int64_t l = 0, r = 0, o = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      l += at[d] * shape.lhs_strides[d];
      r += at[d] * shape.rhs_strides[d];
      o += at[d] * shape.out_strides[d];
    }
    expected[o] += value_of(lhs[l]) * value_of(rhs[r]);
    for (a = at.size(); a > 0 && ++at[a - 1] == shape.extents[a - 1];) at[--a] = 0;
    if (a == 0) break;
  }
  row.interpret(lhs.data(), rhs.data(), out.data(), shape);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(static_cast<double>(out[i]), expected[i]) << row.name << " element " << i;
}

TEST(TensorizeTest, EveryRowComputesWhatItsStridesSay) {
  // AMX: 5 operand types x 4 tile counts x 13 row counts per tile (16 down to 4); 5 dot products.
  ASSERT_EQ(cpu_tensor_intrinsics().size(), 265u);
  for (const TensorIntrinsic& row : cpu_tensor_intrinsics()) {
    const DType l = row.lhs.dtype, r = row.rhs.dtype;
    if (l == DType::BF16) {
      expect_row_meaning<uint16_t, uint16_t, float>(row);
    } else if (l == DType::U8 && r == DType::I8) {
      expect_row_meaning<uint8_t, int8_t, int32_t>(row);
    } else if (l == DType::I8 && r == DType::U8) {
      expect_row_meaning<int8_t, uint8_t, int32_t>(row);
    } else if (l == DType::I8 && r == DType::I8) {
      expect_row_meaning<int8_t, int8_t, int32_t>(row);
    } else {
      ASSERT_TRUE(l == DType::U8 && r == DType::U8) << row.name;
      expect_row_meaning<uint8_t, uint8_t, int32_t>(row);
    }
  }
}

TEST(TensorizeTest, RowsAreOfferedOnlyToTargetsWithTheirFeatures) {
  EXPECT_EQ(tensor_intrinsics_for(with_dot_products()).size(), 3u);
  EXPECT_TRUE(tensor_intrinsics_for(without_them()).empty());
  EXPECT_EQ(tensor_intrinsics_for(parse_target("cpu:x86_64:znver4:avx512+avx512vnni:t2")).size(), 2u);
  // The AVX-512 rows use 512-bit vectors: an AVX2 target does not get them, but AVX-VNNI's.
  EXPECT_TRUE(tensor_intrinsics_for(parse_target("cpu:x86_64:alderlake:avx2+avx512bf16+avx512vnni:t2")).empty());
  EXPECT_EQ(tensor_intrinsics_for(parse_target("cpu:x86_64:alderlake:avx2+avxvnni:t2")).size(), 2u);
  EXPECT_TRUE(tensor_intrinsics_for(parse_target("cpu:x86_64:znver4:avx512+avxvnni:t2")).empty());
  EXPECT_TRUE(tensor_intrinsics_for(parse_target("cuda:sm_75")).empty());
}

TEST(TensorizeTest, DenseNestBecomesACallWhereTheTargetHasTheInstruction) {
  const State s = tensorized("dense_bf16", "Y", 0, 16, 2, "W");
  const LoweredKernel k = test::lower_for(s, with_dot_products());
  ASSERT_EQ(k.tensor_calls.size(), 1u) << to_string(k);
  const TensorCall& call = k.tensor_calls.begin()->second;
  EXPECT_EQ(call.intrinsic->name, "avx512bf16_dot2x16");
  EXPECT_EQ(call.lhs.buffer, "X");
  EXPECT_EQ(call.rhs.buffer, "W");
  EXPECT_EQ(call.out.buffer, "Y");
  EXPECT_EQ(call.guard, nullptr);
  expect_naive_result("dense_bf16", k);

  // Without the instruction the same schedule is the loops it names.
  const LoweredKernel plain = test::lower_for(s, without_them());
  EXPECT_TRUE(plain.tensor_calls.empty());
  expect_naive_result("dense_bf16", plain);
}

TEST(TensorizeTest, IntegerQuadsAreSummedExactly) {
  const LoweredKernel k = test::lower_for(tensorized("matmul_u8s8", "C", 0, 16, 4, "B"), with_dot_products());
  ASSERT_EQ(k.tensor_calls.size(), 1u) << to_string(k);
  EXPECT_EQ(k.tensor_calls.begin()->second.intrinsic->name, "avx512vnni_dot4x16_u8s8");
  expect_naive_result("matmul_u8s8", k);
}

TEST(TensorizeTest, AvxVnniComputesEightLanesOnAvx2Targets) {
  const Target avx2_vnni = parse_target("cpu:x86_64:alderlake:avx2+avxvnni:t2");
  const LoweredKernel k = test::lower_for(tensorized("matmul_u8s8", "C", 0, 8, 4, "B"), avx2_vnni);
  ASSERT_EQ(k.tensor_calls.size(), 1u) << to_string(k);
  EXPECT_EQ(k.tensor_calls.begin()->second.intrinsic->name, "avxvnni_dot4x8_u8s8");
  expect_naive_result("matmul_u8s8", k);
  // Sixteen lanes are two ymm calls' worth: no row computes them at once.
  EXPECT_TRUE(test::lower_for(tensorized("matmul_u8s8", "C", 0, 16, 4, "B"), avx2_vnni).tensor_calls.empty());
}

TEST(TensorizeTest, ANestOfAnotherShapeIsNoCall) {
  // Pairs of bf16 summed 4 at a time match no row: the loops stay loops.
  const LoweredKernel k = test::lower_for(tensorized("dense_bf16", "Y", 0, 16, 4, "W"), with_dot_products());
  EXPECT_TRUE(k.tensor_calls.empty());
  expect_naive_result("dense_bf16", k);
  // Unpacked weights: the lanes' pairs are not consecutive.
  State unpacked(tensorize_dag("dense_bf16"));
  const int y = unpacked.find_stage("Y");
  unpacked.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{16}));
  unpacked.apply(std::make_shared<SplitStep>(y, 3, std::vector<int64_t>{2}));
  unpacked.apply(std::make_shared<ReorderStep>(y, std::vector<int>{0, 1, 3, 2, 4}));
  unpacked.apply(std::make_shared<AnnotateStep>(y, 3, IterAnnotation::Tensorize));
  EXPECT_TRUE(test::lower_for(unpacked, with_dot_products()).tensor_calls.empty());
}

TEST(TensorizeTest, PaddedConvolutionCallIsSkippedOnThePadding) {
  // Reductions rh, rw, c: c (2) is the one along which X is contiguous.
  const LoweredKernel k = test::lower_for(tensorized("conv_bf16", "Y", 2, 16, 2, "W"), with_dot_products());
  ASSERT_EQ(k.tensor_calls.size(), 1u) << to_string(k);
  const TensorCall& call = k.tensor_calls.begin()->second;
  ASSERT_NE(call.guard, nullptr);
  EXPECT_EQ(call.lhs.buffer, "X");  // the padding is inlined: its select became the guard
  expect_naive_result("conv_bf16", k);
}

TEST(TensorizeTest, TheCppGeneratorPrintsTheCall) {
  const State s = tensorized("conv_bf16", "Y", 2, 16, 2, "W");
  const std::vector<ParamDecl> params = kernel_params(*tensorize_dag("conv_bf16"));
  const std::string with = emit_cpp_kernel(test::lower_for(s, with_dot_products()), params, "k");
  EXPECT_NE(with.find("if ("), std::string::npos);
  EXPECT_NE(with.find("ansor_rt::dot_bf16x2_f32x16(&X["), std::string::npos) << with;
  EXPECT_EQ(emit_cpp_kernel(test::lower_for(s, without_them()), params, "k").find("ansor_rt::dot_"), std::string::npos);
}

// An AMX program: the tile product's call with the row strides it was matched with, and the
// tile configuration once per task of a parallel loop and once around the body for calls outside
// parallel loops, never per call.
TEST(TensorizeTest, AmxCallsAndTheirThreadSetup) {
  constexpr const char* kTiles = R"(
kernel dense_tiles {
  X = input bf16[128, 96]
  W = const bf16[64, 96]
  Y[i:128, j:64] = sum(k:96, f32(X[i, k]) * f32(W[j, k]))
}
)";
  const Program program = test::parse(kTiles);
  const auto dag = test::dag_of(program, "dense_tiles");
  const Target amx = parse_target("cpu:x86_64:sapphirerapids:avx512+amx-bf16+amx-int8+amx-tile+avx512bf16+avx512vnni:t2");
  SamplerContext ctx = SamplerContext::for_cpu(amx);
  ctx.tensor_intrinsics = {{DType::BF16, DType::BF16, DType::F32, 32, 2, 32}};
  const State s = default_schedule(dag, ctx);
  const LoweredKernel k = test::lower_for(s, amx);
  ASSERT_FALSE(k.tensor_calls.empty()) << to_string(k);
  for (const auto& [loop, call] : k.tensor_calls) {
    EXPECT_EQ(call.intrinsic->name, "amx_bf16_32x32");
    EXPECT_EQ(call.shape.lhs_strides[1], 96);  // X's rows
  }
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k)) << describe_steps(s);

  const std::string text = emit_cpp_kernel(k, kernel_params(*dag), "k");
  EXPECT_NE(text.find("ansor_rt::amx_dot_bf16_f32<2, 2>(&X["), std::string::npos) << text;
  const size_t tasks = count_of(text, "ansor_rt::parallel_for("), setups = count_of(text, "ansor_rt::amx_begin()");
  ASSERT_GE(tasks, 1u) << text;
  EXPECT_EQ(setups, tasks) << text;
  EXPECT_EQ(count_of(text, "ansor_rt::amx_end();"), tasks) << text;
  EXPECT_NE(text.find("if (!(ansor_rt::amx_begin())) {"), std::string::npos) << text;

  // Without parallel loops: once around the body, the kernel failing where it cannot have tiles.
  std::vector<StepPtr> serial;
  for (const StepPtr& step : s.steps()) {
    auto* annotate = dynamic_cast<const AnnotateStep*>(step.get());
    if (!annotate || annotate->annotation != IterAnnotation::Parallel) serial.push_back(step);
  }
  const std::string serial_text = emit_cpp_kernel(test::lower_for(replay(dag, serial), amx), kernel_params(*dag), "k");
  EXPECT_EQ(count_of(serial_text, "ansor_rt::amx_begin()"), 1u) << serial_text;
  EXPECT_NE(serial_text.find("if (!(ansor_rt::amx_begin())) return 1;"), std::string::npos) << serial_text;
  EXPECT_EQ(count_of(serial_text, "ansor_rt::amx_end();"), 1u) << serial_text;
}

}  // namespace
}  // namespace ansor
