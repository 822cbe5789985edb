// Tests of the elementwise and layout built-ins: bias_add on a non-default axis, relu / sigmoid /
// tanh / exp / gelu, + - * / with numpy broadcasting, max and min of tensors, tensor-scalar
// arithmetic, transpose with and without perm, and reshape with an inferred extent.
#include "reference.h"

#include <algorithm>
#include <cmath>

namespace kernel_tests {
namespace {

// f applied to every element of x.
template <class F>
Reference map_reference(const Tensor<float>& x, F f) {
  Reference y(x.shape());
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(double{x[i]});
  return y;
}

TEST(Elementwise, BiasAddOnAxis2) {
  Tensor<float> x({2, 3, 4, 5}), bias({4}), y({2, 3, 4, 5});
  fill_random(x, 71);
  fill_random(bias, 72);
  ASSERT_NO_FATAL_FAILURE(call_kernel("bias_add_axis2", ansor_test_kernels_bias_add_axis2, x, bias, y));

  Reference expected({2, 3, 4, 5});
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d) expected(a, b, c, d) = double{x(a, b, c, d)} + bias(c);
  expect_close(y, expected, kernel_tolerance("bias_add_axis2"));
}

TEST(Elementwise, Activations) {
  Tensor<float> x({7, 9}), relu({7, 9}), sigmoid({7, 9}), tanh({7, 9}), exp({7, 9}), gelu({7, 9});
  fill_random(x, 73, -4.0, 4.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("activations", ansor_test_kernels_activations, x, relu, sigmoid, tanh, exp, gelu));

  expect_close(relu, map_reference(x, [](double v) { return std::max(v, 0.0); }), kernel_tolerance("activations"));
  expect_close(sigmoid, map_reference(x, [](double v) { return 1 / (1 + std::exp(-v)); }), kernel_tolerance("activations"));
  expect_close(tanh, map_reference(x, [](double v) { return std::tanh(v); }), kernel_tolerance("activations"));
  expect_close(exp, map_reference(x, [](double v) { return std::exp(v); }), kernel_tolerance("activations"));
  expect_close(gelu, map_reference(x, [](double v) { return v * (1 + std::erf(v / std::sqrt(2.0))) / 2; }), kernel_tolerance("activations"));
}

TEST(Elementwise, BroadcastArithmetic) {
  Tensor<float> a({3, 1, 5}), b({4, 1});
  Tensor<float> sum({3, 4, 5}), difference({3, 4, 5}), product({3, 4, 5}), quotient({3, 4, 5});
  fill_random(a, 74);
  fill_random(b, 75, 0.5, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("broadcast_arithmetic", ansor_test_kernels_broadcast_arithmetic, a, b, sum, difference,
                                      product, quotient));

  Reference expected_sum({3, 4, 5}), expected_difference({3, 4, 5}), expected_product({3, 4, 5}), expected_quotient({3, 4, 5});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) {
        double x = a(i, 0, k), y = b(j, 0);
        expected_sum(i, j, k) = x + y;
        expected_difference(i, j, k) = x - y;
        expected_product(i, j, k) = x * y;
        expected_quotient(i, j, k) = x / y;
      }
  expect_close(sum, expected_sum, kernel_tolerance("broadcast_arithmetic"));
  expect_close(difference, expected_difference, kernel_tolerance("broadcast_arithmetic"));
  expect_close(product, expected_product, kernel_tolerance("broadcast_arithmetic"));
  expect_close(quotient, expected_quotient, kernel_tolerance("broadcast_arithmetic"));
}

TEST(Elementwise, MaxMinOfBroadcastTensors) {
  Tensor<float> a({4, 5}), b({5}), max({4, 5}), min({4, 5});
  fill_random(a, 76);
  fill_random(b, 77);
  ASSERT_NO_FATAL_FAILURE(call_kernel("max_min_tensors", ansor_test_kernels_max_min_tensors, a, b, max, min));

  Reference expected_max({4, 5}), expected_min({4, 5});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      expected_max(i, j) = std::max(a(i, j), b(j));
      expected_min(i, j) = std::min(a(i, j), b(j));
    }
  expect_close(max, expected_max, 0.0);
  expect_close(min, expected_min, 0.0);
}

TEST(Elementwise, TensorScalarArithmetic) {
  Tensor<float> x({5, 6}), affine({5, 6}), reversed({5, 6}), clamped({5, 6});
  fill_random(x, 78);
  ASSERT_NO_FATAL_FAILURE(call_kernel("tensor_scalar", ansor_test_kernels_tensor_scalar, x, affine, reversed, clamped));

  expect_close(affine, map_reference(x, [](double v) { return v * 2.5 + 1; }), kernel_tolerance("tensor_scalar"));
  expect_close(reversed, map_reference(x, [](double v) { return 3.0 - v / 4; }), kernel_tolerance("tensor_scalar"));
  expect_close(clamped, map_reference(x, [](double v) { return std::min(std::max(v, -0.5), 0.25); }), kernel_tolerance("tensor_scalar"));
}

TEST(Layout, TransposeReversesAxesByDefault) {
  Tensor<float> x({2, 3, 4}), y({4, 3, 2});
  fill_random(x, 79);
  ASSERT_NO_FATAL_FAILURE(call_kernel("transpose_reverse", ansor_test_kernels_transpose_reverse, x, y));

  Reference expected({4, 3, 2});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected(k, j, i) = x(i, j, k);
  expect_close(y, expected, 0.0);
}

TEST(Layout, TransposeWithPerm) {
  Tensor<float> x({2, 3, 4, 5}), y({2, 4, 5, 3});
  fill_random(x, 80);
  ASSERT_NO_FATAL_FAILURE(call_kernel("transpose_perm", ansor_test_kernels_transpose_perm, x, y));

  // perm = [0, 2, 3, 1]: output dimension d is input dimension perm[d].
  Reference expected({2, 4, 5, 3});
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d) expected(a, c, d, b) = x(a, b, c, d);
  expect_close(y, expected, 0.0);
}

TEST(Layout, ReshapeWithInferredExtent) {
  Tensor<float> x({4, 6, 5}), y({5, 6, 4});
  fill_random(x, 81);
  ASSERT_NO_FATAL_FAILURE(call_kernel("reshape_inferred", ansor_test_kernels_reshape_inferred, x, y));

  // Row-major order is kept: element (a, b, c) of [5, 6, 4] is flat element a·24 + b·4 + c.
  Reference expected({5, 6, 4});
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 6; ++b)
      for (int c = 0; c < 4; ++c) expected(a, b, c) = 2.0 * x[a * 24 + b * 4 + c];
  expect_close(y, expected, 0.0);
}

}  // namespace
}  // namespace kernel_tests
