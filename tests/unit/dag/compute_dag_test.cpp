// ComputeDAG: dependency edges, outputs, FLOPs, canonical text and workload keys, and the access
// predicates the derivation rules read.
#include "dag/compute_dag.h"

#include <gtest/gtest.h>

#include "dag/access_analysis.h"
#include "lang/program.h"
#include "test_support.h"

namespace ansor {
namespace {

using test::parse;

const ComputeDAG& dag_of(const Program& p, const std::string& kernel) { return p.find(kernel)->dag; }

constexpr const char* kConvBiasRelu = R"(
kernel conv {
  X = input f32[1, 8, 10, 10]
  W = const f32[16, 8, 3, 3]
  b = const f32[16]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
)";

TEST(ComputeDagTest, EdgesInputsAndOutputs) {
  Program p = parse(kConvBiasRelu);
  const ComputeDAG& dag = dag_of(p, "conv");
  ASSERT_EQ(dag.num_ops(), 7);  // X W b pad conv bias_add relu
  EXPECT_EQ(dag.inputs(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dag.outputs(), (std::vector<int>{6}));
  int conv = dag.find("Y.conv2d");
  ASSERT_GE(conv, 0);
  EXPECT_EQ(dag.producers(conv), (std::vector<int>{dag.find("Y.pad"), 1}));
  EXPECT_EQ(dag.consumers(conv), (std::vector<int>{dag.find("Y.bias_add")}));
}

TEST(ComputeDagTest, FlopsCountMultiplyAddsTwice) {
  Program p = parse("kernel mm { A = input f32[4, 6]\n B = input f32[6, 5]\n C = matmul(A, B) }");
  EXPECT_DOUBLE_EQ(dag_of(p, "mm").flop_count(), 2.0 * 4 * 5 * 6);
  Program q = parse(kConvBiasRelu);
  // conv: 16*10*10 points * 8*3*3 * 2; bias_add and relu: one op per output element.
  EXPECT_DOUBLE_EQ(dag_of(q, "conv").flop_count(), 16.0 * 100 * 72 * 2 + 2 * 1600);
}

TEST(ComputeDagTest, WorkloadKeyIgnoresNamesWhitespaceAndComments) {
  Program a = parse("kernel one { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }");
  Program b = parse(
      "# the same matmul\nkernel two {\n  P = input f32[4,6]   # left\n  Q = input f32[6,5]\n"
      "  R[x:4, y:5] = sum(r:6, P[x, r] * Q[r, y])\n}\n");
  EXPECT_EQ(dag_of(a, "one").workload_key(), dag_of(b, "two").workload_key());
  EXPECT_EQ(dag_of(a, "one").canonical_text(), dag_of(b, "two").canonical_text());
  Program c = parse("kernel one { A = input f32[4, 6]\n B = input f32[6, 7]\n C[i:4, j:7] = sum(k:6, A[i, k] * B[k, j]) }");
  EXPECT_NE(dag_of(a, "one").workload_key(), dag_of(c, "one").workload_key());
  Program d = parse("kernel one { A = input f64[4, 6]\n B = input f64[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }");
  EXPECT_NE(dag_of(a, "one").workload_key(), dag_of(d, "one").workload_key());
  EXPECT_EQ(dag_of(a, "one").workload_key().size(), 32u);
}

TEST(AccessAnalysisTest, DerivationRulePredicates) {
  Program p = parse(kConvBiasRelu);
  const ComputeDAG& dag = dag_of(p, "conv");
  const Operation& pad = dag.op(dag.find("Y.pad"));
  const Operation& conv = dag.op(dag.find("Y.conv2d"));
  const Operation& bias = dag.op(dag.find("Y.bias_add"));
  const Operation& relu = dag.op(dag.find("Y"));
  EXPECT_FALSE(is_strictly_inlinable(pad));  // a branch
  EXPECT_FALSE(is_strictly_inlinable(conv));
  EXPECT_TRUE(is_strictly_inlinable(bias));
  EXPECT_TRUE(is_strictly_inlinable(relu));
  EXPECT_TRUE(needs_multi_level_tiling(conv));
  EXPECT_FALSE(needs_multi_level_tiling(bias));
  EXPECT_TRUE(elementwise_match(conv, bias));
  EXPECT_TRUE(elementwise_match(bias, relu));
  EXPECT_FALSE(elementwise_match(pad, conv));
}

TEST(AccessAnalysisTest, ReductionParallelism) {
  Program p = parse(
      "kernel norm { X = input f32[4, 8192]\n S[i:4] = sum(k:8192, X[i, k] * X[i, k]) }\n"
      "kernel wide { X = input f32[4096, 8]\n S[i:4096] = sum(k:8, X[i, k]) }\n");
  const ComputeDAG& norm = dag_of(p, "norm");
  const ComputeDAG& wide = dag_of(p, "wide");
  EXPECT_TRUE(has_more_reduction_parallel(norm.op(norm.outputs()[0]), 2));
  EXPECT_FALSE(has_more_reduction_parallel(wide.op(wide.outputs()[0]), 2));
  EXPECT_FALSE(needs_multi_level_tiling(norm.op(norm.outputs()[0])));
}

}  // namespace
}  // namespace ansor
