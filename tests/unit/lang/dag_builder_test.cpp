// The tests' DAG builder (dag_builder.h) builds what the parser builds for the same kernel: the
// same operations, names, axes and canonical text, so that the tests of lower layers that use it
// test the DAGs kernels.def gives.
#include "dag_builder.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ansor {
namespace {

void expect_same_dag(const ComputeDAG& built, const std::string& kernel_text) {
  Program program = test::parse(kernel_text);
  ASSERT_EQ(program.kernels.size(), 1u);
  const ComputeDAG& parsed = program.kernels[0].dag;
  ASSERT_EQ(built.num_ops(), parsed.num_ops()) << parsed.canonical_text();
  for (int i = 0; i < parsed.num_ops(); ++i) {
    EXPECT_EQ(built.op(i).name, parsed.op(i).name);
    EXPECT_EQ(built.op(i).is_const, parsed.op(i).is_const);
    ASSERT_EQ(built.op(i).axes.size(), parsed.op(i).axes.size());
    for (size_t a = 0; a < parsed.op(i).axes.size(); ++a) EXPECT_EQ(built.op(i).axes[a].var->name, parsed.op(i).axes[a].var->name);
  }
  EXPECT_EQ(built.canonical_text(), parsed.canonical_text());
}

Expr f32(const std::string& tensor, std::vector<Expr> indices) { return load(tensor, DType::F32, std::move(indices)); }

TEST(DagBuilderTest, UserWrittenReductionAndElementwise) {
  expect_same_dag(*test::DagBuilder()
                       .input("A", {64, 48})
                       .constant("B", {48, 32})
                       .sum(
                           "C", {64, 32}, {48}, [](const auto& ij, const auto& k) { return mul(f32("A", {ij[0], k[0]}), f32("B", {k[0], ij[1]})); },
                           {"i", "j"}, {"k"})
                       .build(),
                  "kernel mm { A = input f32[64, 48]\n B = const f32[48, 32]\n C[i:64, j:32] = sum(k:48, A[i, k] * B[k, j]) }");
  expect_same_dag(*test::DagBuilder()
                       .input("X", {6, 10})
                       .compute("Y", {6, 10}, [](const auto& ij) { return mul(f32("X", ij), float_imm(2.0)); }, {"i", "j"})
                       .build(),
                  "kernel k { X = input f32[6, 10]\n Y[i:6, j:10] = X[i, j] * 2.0 }");
}

TEST(DagBuilderTest, BuiltInMatmulAndPaddedConvolution) {
  expect_same_dag(*test::DagBuilder().input("A", {48, 32}).constant("B", {32, 40}).matmul("C", "A", "B").build(),
                  "kernel mm { A = input f32[48, 32]\n B = const f32[32, 40]\n C = matmul(A, B) }");
  expect_same_dag(*test::DagBuilder()
                       .input("X", {1, 4, 8, 8})
                       .constant("W", {8, 4, 3, 3})
                       .pad2d("Y.pad", "X", 1)
                       .conv2d("Y.conv2d", "Y.pad", "W")
                       .relu("Y", "Y.conv2d")
                       .build(),
                  "kernel conv { X = input f32[1, 4, 8, 8]\n W = const f32[8, 4, 3, 3]\n Y = relu(conv2d_nchw(X, W, pad = 1)) }");
}

}  // namespace
}  // namespace ansor
