// Layout rewrite of inputs: the packed tensor is indexed by the consumer's loops that read it,
// and a fused loop that also runs over loops which do not index the tensor contributes only the
// parts that do, so the packed tensor never holds copies of the plain one; a layout that would
// hold copies anyway is not made. A const input is packed by the caller, any other by the kernel
// into a workspace. Local buffers are laid out in their loops' order.
#include "lower/packing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>

#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "dag_builder.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr int kB = 1, kC = 2;  // stages of the matmul below (A is stage 0)

std::shared_ptr<const ComputeDAG> matmul_dag() {
  // C[i:12, j:20] = sum(k:8, A[i, k] * B[k, j])
  return test::DagBuilder()
      .input("A", {12, 8})
      .constant("B", {8, 20})
      .sum(
          "C", {12, 20}, {8}, [](const auto& ij, const auto& k) { return mul(load("A", DType::F32, {ij[0], k[0]}), load("B", DType::F32, {k[0], ij[1]})); },
          {"i", "j"}, {"k"})
      .build();
}

// C's loops after splitting i (12 = 3 x 4) and j (20 = 4 x 5): i0, i1, j0, j1, k.
State split_matmul() {
  State s(matmul_dag());
  s.apply(std::make_shared<SplitStep>(kC, 0, std::vector<int64_t>{4}));
  s.apply(std::make_shared<SplitStep>(kC, 2, std::vector<int64_t>{5}));
  return s;
}

// The shape of B's packed layout under `state`, after checking that the schedule computes on
// packed inputs what the untransformed program computes.
std::vector<int64_t> packed_shape_of_b(const State& state) {
  LoweredKernel naive = lower_state(State(state.dag_ptr()), "naive");
  LoweredKernel lowered = lower_state(state, "k");
  EXPECT_EQ(lowered.packed_inputs.size(), 1u);
  if (lowered.packed_inputs.size() != 1) return {};
  std::vector<std::vector<double>> plain = test::random_args(naive, 11), expected = plain;
  interpret(naive, expected);
  std::vector<std::vector<double>> args = test::packed_args(lowered, plain);
  interpret(lowered, args);
  for (size_t e = 0; e < expected[kC].size(); ++e) {
    EXPECT_NEAR(args[kC][e], expected[kC][e], 1e-9) << "element " << e << "\n" << to_string(lowered);
    if (std::abs(args[kC][e] - expected[kC][e]) > 1e-9) break;
  }
  return lowered.packed_inputs[0].shape;
}

// Applies the steps to the split matmul and packs B.
State with_packed_b(std::vector<std::shared_ptr<Step>> steps) {
  State s = split_matmul();
  for (auto& step : steps) s.apply(std::move(step));
  s.apply(std::make_shared<LayoutRewriteStep>(kB));
  return s;
}

TEST(PackingTest, UnfusedLoopsIndexThePackedTensor) {
  State s = with_packed_b({std::make_shared<ReorderStep>(kC, std::vector<int>{0, 2, 4, 1, 3})});
  EXPECT_EQ(packed_shape_of_b(s), (std::vector<int64_t>{4, 8, 5}));
}

TEST(PackingTest, FusedLoopContributesOnlyThePartThatIndexesTheTensor) {
  // i0 and j0 fused (12 iterations); B is read through j0 = fused % 4 alone.
  State s = with_packed_b({std::make_shared<ReorderStep>(kC, std::vector<int>{0, 2, 4, 1, 3}),
                           std::make_shared<FuseStep>(kC, std::vector<int>{0, 1})});
  EXPECT_EQ(packed_shape_of_b(s), (std::vector<int64_t>{4, 8, 5}));
}

TEST(PackingTest, FusedLoopWithTwoIndexingPartsGivesTwoCoordinates) {
  // j0, i0 and j1 fused (60 iterations): B is read through j0 = fused / 15 and j1 = fused % 5,
  // with i0 between them.
  State s = with_packed_b({std::make_shared<ReorderStep>(kC, std::vector<int>{2, 0, 3, 1, 4}),
                           std::make_shared<FuseStep>(kC, std::vector<int>{0, 1, 2})});
  EXPECT_EQ(packed_shape_of_b(s), (std::vector<int64_t>{4, 5, 8}));
}

TEST(PackingTest, FusedLoopReadWholeKeepsItsExtent) {
  // j0 and j1 fused back into one loop of 20: every value of it indexes B.
  State s = with_packed_b({std::make_shared<FuseStep>(kC, std::vector<int>{2, 3})});
  std::vector<int64_t> shape = packed_shape_of_b(s);
  EXPECT_EQ(std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()), 8 * 20);
}

// A tile's accumulators are laid out in the order of its loops: C computed in 4 x 5 tiles, its
// local stage running k, j, i (i innermost), has C.local's i dimension contiguous, and the
// program still computes C.
TEST(LocalBufferTest, AccumulatorsAreContiguousAlongTheInnermostLoop) {
  State s(matmul_dag());
  s.apply(std::make_shared<CacheWriteStep>(kC, MemoryScope::Local));
  const int local = s.find_stage("C.local"), c = s.find_stage("C");
  s.apply(std::make_shared<SplitStep>(c, 0, std::vector<int64_t>{4}));                // i.0, i.1, j
  s.apply(std::make_shared<SplitStep>(c, 2, std::vector<int64_t>{5}));                // i.0, i.1, j.0, j.1
  s.apply(std::make_shared<ReorderStep>(c, std::vector<int>{0, 2, 1, 3}));           // i.0, j.0, i.1, j.1
  s.apply(std::make_shared<ComputeAtStep>(local, c, 1));
  s.apply(std::make_shared<ReorderStep>(local, std::vector<int>{2, 1, 0}));          // k, j, i
  LoweredKernel lowered = lower_state(s, "k");
  const Buffer* acc = lowered.find_buffer("C.local");
  ASSERT_NE(acc, nullptr) << to_string(lowered);
  EXPECT_EQ(acc->shape, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(acc->strides, (std::vector<int64_t>{1, 4})) << to_string(lowered);
  EXPECT_EQ(acc->num_elements(), 20);
  LoweredKernel naive = lower_state(State(s.dag_ptr()), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 7), args = expected;
  interpret(naive, expected);
  interpret(lowered, args);
  const size_t out = expected.size() - 1;
  for (size_t e = 0; e < expected[out].size(); ++e) ASSERT_NEAR(args[out][e], expected[out][e], 1e-9) << "element " << e;
}

// B read at (j + 1) % 2: j cannot be split into digits, so a packed B would be indexed by all
// 20 values of j and hold 10 copies of each element. The plain layout is kept.
// A, not const, packed by the kernel: its parameter stays plain, the body's first statements fill
// a workspace in C's loop order (i0, k, i1 read it), and C reads that.
TEST(PackingTest, InputsThatAreNotConstArePackedByTheKernel) {
  State s = split_matmul();
  s.apply(std::make_shared<ReorderStep>(kC, std::vector<int>{0, 2, 4, 1, 3}));
  s.apply(std::make_shared<LayoutRewriteStep>(0));
  const LoweredKernel lowered = lower_state(s, "k");
  EXPECT_TRUE(lowered.packed_inputs.empty());
  EXPECT_TRUE(lowered.packers.empty());
  ASSERT_EQ(lowered.packed_in_kernel.size(), 1u);
  EXPECT_EQ(lowered.packed_in_kernel[0].buffer, "A.packed");
  EXPECT_EQ(lowered.buffers[lowered.params[0]].shape, (std::vector<int64_t>{12, 8}));
  const Buffer* packed = lowered.find_buffer("A.packed");
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(packed->scope, BufferScope::Workspace);
  EXPECT_EQ(packed->shape, (std::vector<int64_t>{3, 8, 4}));
  const std::string text = to_string(lowered);
  EXPECT_LT(text.find("A.packed["), text.find("C["));

  LoweredKernel naive = lower_state(State(s.dag_ptr()), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 13), args = expected;
  interpret(naive, expected);
  interpret(lowered, args);
  for (size_t e = 0; e < expected[kC].size(); ++e) ASSERT_NEAR(args[kC][e], expected[kC][e], 1e-9) << "element " << e;
}

TEST(PackingTest, ALayoutThatWouldReplicateTheTensorIsNotPacked) {
  // C[i:12, j:20] = sum(k:8, A[i, k] * B[k, (j + 1) % 2])
  auto dag = test::DagBuilder()
                 .input("A", {12, 8})
                 .constant("B", {8, 2})
                 .sum(
                     "C", {12, 20}, {8},
                     [](const auto& ij, const auto& k) {
                       return mul(load("A", DType::F32, {ij[0], k[0]}), load("B", DType::F32, {k[0], mod(add(ij[1], 1), int_imm(2))}));
                     },
                     {"i", "j"}, {"k"})
                 .build();
  State s(dag);
  s.apply(std::make_shared<SplitStep>(kC, 2, std::vector<int64_t>{5}));
  s.apply(std::make_shared<LayoutRewriteStep>(kB));
  LoweredKernel lowered = lower_state(s, "k");
  EXPECT_TRUE(lowered.packed_inputs.empty()) << to_string(lowered);
  LoweredKernel naive = lower_state(State(dag), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 5), args = expected;
  interpret(naive, expected);
  interpret(lowered, args);
  for (size_t e = 0; e < expected[kC].size(); ++e) ASSERT_NEAR(args[kC][e], expected[kC][e], 1e-9) << "element " << e;
}

}  // namespace
}  // namespace ansor
