// Tests of the matmul, batch_matmul and dense built-ins (dense fused with bias_add and relu).
#include "reference.h"

#include <algorithm>

namespace kernel_tests {
namespace {

TEST(LinearAlgebra, Matmul) {
  Tensor<float> a({13, 17}), b({17, 11}), c({13, 11});
  fill_random(a, 1);
  fill_random(b, 2);
  ASSERT_NO_FATAL_FAILURE(call_kernel("matmul", ansor_test_kernels_matmul, a, b, c));

  Reference expected({13, 11});
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 11; ++j)
      for (int k = 0; k < 17; ++k) expected(i, j) += double{a(i, k)} * b(k, j);
  expect_close(c, expected, kernel_tolerance("matmul"));
}

TEST(LinearAlgebra, BatchMatmul) {
  Tensor<float> a({3, 5, 7}), b({3, 7, 6}), c({3, 5, 6});
  fill_random(a, 3);
  fill_random(b, 4);
  ASSERT_NO_FATAL_FAILURE(call_kernel("batch_matmul", ansor_test_kernels_batch_matmul, a, b, c));

  Reference expected({3, 5, 6});
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 7; ++k) expected(n, i, j) += double{a(n, i, k)} * b(n, k, j);
  expect_close(c, expected, kernel_tolerance("batch_matmul"));
}

TEST(LinearAlgebra, DenseBiasRelu) {
  Tensor<float> x({6, 20}), w({9, 20}), bias({9}), y({6, 9});
  fill_random(x, 5);
  fill_random(w, 6);
  fill_random(bias, 7);
  ASSERT_NO_FATAL_FAILURE(call_kernel("dense_bias_relu", ansor_test_kernels_dense_bias_relu, x, w, bias, y));

  Reference expected({6, 9});
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 9; ++j) {
      double sum = bias(j);
      for (int k = 0; k < 20; ++k) sum += double{x(i, k)} * w(j, k);
      expected(i, j) = std::max(sum, 0.0);
    }
  expect_close(y, expected, kernel_tolerance("dense_bias_relu"));
}

}  // namespace
}  // namespace kernel_tests
