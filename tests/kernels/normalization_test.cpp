// Tests of softmax (over the first and the last axis of a 3-d tensor, and over long rows),
// layer_norm (over the last dimension, short and long, and over the last two with gamma and beta
// of their shape) and batch_norm.
#include "reference.h"

#include <algorithm>
#include <cmath>

namespace kernel_tests {
namespace {

// Softmax along `axis`: the elements of one softmax are `stride` apart in the flat array.
Reference softmax_reference(const Reference& x, size_t axis) {
  const auto& shape = x.shape();
  int64_t extent = shape[axis], stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
  Reference y(shape);
  for (size_t first = 0; first < x.size(); ++first) {
    if (first / stride % extent != 0) continue;  // not the start of a softmax
    double max = x[first], sum = 0;
    for (int64_t t = 1; t < extent; ++t) max = std::max(max, x[first + t * stride]);
    for (int64_t t = 0; t < extent; ++t) sum += std::exp(x[first + t * stride] - max);
    for (int64_t t = 0; t < extent; ++t) y[first + t * stride] = std::exp(x[first + t * stride] - max) / sum;
  }
  return y;
}

TEST(Normalization, SoftmaxAxis0) {
  Tensor<float> x({4, 5, 6}), y({4, 5, 6});
  fill_random(x, 51, -3.0, 3.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("softmax_axis0", ansor_test_kernels_softmax_axis0, x, y));
  expect_close(y, softmax_reference(widen(x), 0), kernel_tolerance("softmax_axis0"));
}

TEST(Normalization, SoftmaxLastAxis) {
  Tensor<float> x({4, 5, 6}), y({4, 5, 6});
  fill_random(x, 52, -3.0, 3.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("softmax_last", ansor_test_kernels_softmax_last, x, y));
  expect_close(y, softmax_reference(widen(x), 2), kernel_tolerance("softmax_last"));
}

// Normalises each group of the trailing `inner` elements: (x - mean) / sqrt(variance + eps),
// scaled by gamma and shifted by beta, which have the trailing dimensions' shape.
Reference layer_norm_reference(const Reference& x, const Reference& gamma, const Reference& beta, double eps) {
  const size_t inner = gamma.size(), outer = x.size() / inner;
  Reference y(x.shape());
  for (size_t o = 0; o < outer; ++o) {
    double mean = 0, variance = 0;
    for (size_t j = 0; j < inner; ++j) mean += x[o * inner + j] / static_cast<double>(inner);
    for (size_t j = 0; j < inner; ++j) variance += std::pow(x[o * inner + j] - mean, 2) / static_cast<double>(inner);
    for (size_t j = 0; j < inner; ++j)
      y[o * inner + j] = (x[o * inner + j] - mean) / std::sqrt(variance + eps) * gamma[j] + beta[j];
  }
  return y;
}

TEST(Normalization, LayerNormLastAxis) {
  Tensor<float> x({6, 16}), gamma({16}), beta({16}), y({6, 16});
  fill_random(x, 53, -2.0, 3.0);
  fill_random(gamma, 54, 0.5, 1.5);
  fill_random(beta, 55);
  ASSERT_NO_FATAL_FAILURE(call_kernel("layer_norm_last", ansor_test_kernels_layer_norm_last, x, gamma, beta, y));
  expect_close(y, layer_norm_reference(widen(x), widen(gamma), widen(beta), 1e-5), kernel_tolerance("layer_norm_last"));
}

// Rows of hundreds of elements, which GPU schedules reduce across the threads of a block.
TEST(Normalization, SoftmaxAndLayerNormOfLongRows) {
  Tensor<float> x({3, 300}), y({3, 300});
  fill_random(x, 61, -3.0, 3.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("softmax_long_rows", ansor_test_kernels_softmax_long_rows, x, y));
  expect_close(y, softmax_reference(widen(x), 1), kernel_tolerance("softmax_long_rows"));

  Tensor<float> rows({2, 256}), gamma({256}), beta({256}), normed({2, 256});
  fill_random(rows, 62, -2.0, 3.0);
  fill_random(gamma, 63, 0.5, 1.5);
  fill_random(beta, 64);
  ASSERT_NO_FATAL_FAILURE(call_kernel("layer_norm_long_rows", ansor_test_kernels_layer_norm_long_rows, rows, gamma, beta, normed));
  expect_close(normed, layer_norm_reference(widen(rows), widen(gamma), widen(beta), 1e-5), kernel_tolerance("layer_norm_long_rows"));
}

TEST(Normalization, LayerNormOverLastTwoAxes) {
  Tensor<float> x({3, 4, 8}), gamma({4, 8}), beta({4, 8}), y({3, 4, 8});
  fill_random(x, 56, -2.0, 3.0);
  fill_random(gamma, 57, 0.5, 1.5);
  fill_random(beta, 58);
  ASSERT_NO_FATAL_FAILURE(call_kernel("layer_norm_axis_m2", ansor_test_kernels_layer_norm_axis_m2, x, gamma, beta, y));
  expect_close(y, layer_norm_reference(widen(x), widen(gamma), widen(beta), 1e-3), kernel_tolerance("layer_norm_axis_m2"));
}

TEST(Normalization, BatchNormInference) {
  Tensor<float> x({2, 4, 3, 3}), mean({4}), var({4}), gamma({4}), beta({4}), y({2, 4, 3, 3});
  fill_random(x, 59);
  fill_random(mean, 60);
  fill_random(var, 61, 0.1, 2.0);
  fill_random(gamma, 62);
  fill_random(beta, 63);
  ASSERT_NO_FATAL_FAILURE(call_kernel("batch_norm", ansor_test_kernels_batch_norm, x, mean, var, gamma, beta, y));

  Reference expected({2, 4, 3, 3});
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 4; ++c)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 3; ++w)
          expected(n, c, h, w) = (double{x(n, c, h, w)} - mean(c)) / std::sqrt(double{var(c)} + 1e-5) * gamma(c) + beta(c);
  expect_close(y, expected, kernel_tolerance("batch_norm"));
}

}  // namespace
}  // namespace kernel_tests
