// Tests of index-form kernels: a hand-written matmul, zero padding as a select feeding a
// convolution, max / min / prod reductions, reductions nested in expressions, a reduction over two
// axes, floor division and modulo of indices with negative intermediate values, and the math
// functions.
#include "reference.h"

#include <algorithm>
#include <cmath>

namespace kernel_tests {
namespace {

TEST(IndexForm, MatmulByHand) {
  Tensor<float> a({12, 15}), b({15, 10}), c({12, 10});
  fill_random(a, 91);
  fill_random(b, 92);
  ASSERT_NO_FATAL_FAILURE(call_kernel("matmul_by_hand", ansor_test_kernels_matmul_by_hand, a, b, c));

  Reference expected({12, 10});
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 15; ++k) expected(i, j) += double{a(i, k)} * b(k, j);
  expect_close(c, expected, kernel_tolerance("matmul_by_hand"));
}

TEST(IndexForm, SelectPaddingConvolutionBiasRelu) {
  Tensor<float> x({1, 3, 6, 6}), w({4, 3, 3, 3}), bias({4}), r({1, 4, 6, 6});
  fill_random(x, 93);
  fill_random(w, 94);
  fill_random(bias, 95);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv_select_padding", ansor_test_kernels_conv_select_padding, x, w, bias, r));

  ConvParams p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  Reference expected = conv2d_nchw_reference(widen(x), widen(w), p);
  for (int f = 0; f < 4; ++f)
    for (int y = 0; y < 6; ++y)
      for (int v = 0; v < 6; ++v) expected(0, f, y, v) = std::max(expected(0, f, y, v) + bias(f), 0.0);
  expect_close(r, expected, kernel_tolerance("conv_select_padding"));
}

TEST(IndexForm, MaxMinProdReductions) {
  Tensor<float> x({5, 7}), largest({5}), smallest({5}), product({5});
  fill_random(x, 96, -1.5, 1.5);
  ASSERT_NO_FATAL_FAILURE(
      call_kernel("max_min_prod_reductions", ansor_test_kernels_max_min_prod_reductions, x, largest, smallest, product));

  Reference expected_largest({5}), expected_smallest({5}), expected_product({5});
  for (int i = 0; i < 5; ++i) {
    expected_largest(i) = expected_smallest(i) = x(i, 0);
    expected_product(i) = 1;
    for (int k = 0; k < 7; ++k) {
      expected_largest(i) = std::max<double>(expected_largest(i), x(i, k));
      expected_smallest(i) = std::min<double>(expected_smallest(i), x(i, k));
      expected_product(i) *= x(i, k);
    }
  }
  expect_close(largest, expected_largest, 0.0);
  expect_close(smallest, expected_smallest, 0.0);
  expect_close(product, expected_product, kernel_tolerance("max_min_prod_reductions"));
}

TEST(IndexForm, ReductionsNestedInExpressions) {
  Tensor<float> x({6, 12}), norm({6}), mean({6}), range({6}), centered({6, 12});
  fill_random(x, 97);
  ASSERT_NO_FATAL_FAILURE(call_kernel("nested_reductions", ansor_test_kernels_nested_reductions, x, norm, mean, range, centered));

  Reference expected_norm({6}), expected_mean({6}), expected_range({6}), expected_centered({6, 12});
  for (int i = 0; i < 6; ++i) {
    double squares = 0, sum = 0, max = x(i, 0), min = x(i, 0);
    for (int k = 0; k < 12; ++k) {
      squares += double{x(i, k)} * x(i, k);
      sum += x(i, k);
      max = std::max<double>(max, x(i, k));
      min = std::min<double>(min, x(i, k));
    }
    expected_norm(i) = std::sqrt(squares);
    expected_mean(i) = sum / 12;
    expected_range(i) = max - min;
    for (int j = 0; j < 12; ++j) expected_centered(i, j) = x(i, j) - sum / 12;
  }
  expect_close(norm, expected_norm, kernel_tolerance("nested_reductions"));
  expect_close(mean, expected_mean, kernel_tolerance("nested_reductions"));
  expect_close(range, expected_range, kernel_tolerance("nested_reductions"));
  expect_close(centered, expected_centered, kernel_tolerance("nested_reductions"));
}

TEST(IndexForm, SumOverTwoAxes) {
  Tensor<float> x({4, 5, 6}), s({5});
  fill_random(x, 98);
  ASSERT_NO_FATAL_FAILURE(call_kernel("two_axis_sum", ansor_test_kernels_two_axis_sum, x, s));

  Reference expected({5});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 6; ++k) expected(j) += double{x(i, j, k)} * x(i, j, k);
  expect_close(s, expected, kernel_tolerance("two_axis_sum"));
}

TEST(IndexForm, FloorDivisionAndModuloOfNegativeIndices) {
  Tensor<float> x({6}), wrapped({10}), halved({10}), clamped({10}), signed_values({9, 4});
  fill_random(x, 99);
  ASSERT_NO_FATAL_FAILURE(call_kernel("floor_index_arithmetic", ansor_test_kernels_floor_index_arithmetic, x, wrapped, halved,
                                      clamped, signed_values));

  Reference expected_wrapped({10}), expected_halved({10}), expected_clamped({10}), expected_signed({9, 4});
  for (int i = 0; i < 10; ++i) {
    expected_wrapped(i) = x(floor_mod(i - 3, 4));
    expected_halved(i) = x(floor_div(i - 5, 2) + 3);
    expected_clamped(i) = i >= 5 ? x(floor_div(i - 5, 2)) : x(floor_mod(5 - i, 6));
  }
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 4; ++j) expected_signed(i, j) = floor_div(i - 4, 3) * 10 + floor_mod(j - 2, 3);
  expect_close(wrapped, expected_wrapped, 0.0);
  expect_close(halved, expected_halved, 0.0);
  expect_close(clamped, expected_clamped, 0.0);
  expect_close(signed_values, expected_signed, 0.0);
}

TEST(IndexForm, MathFunctions) {
  const std::vector<int64_t> shape = {24};
  Tensor<float> x(shape), log(shape), sqrt(shape), rsqrt(shape), erf(shape), floor(shape), ceil(shape), pow(shape), float_mod(shape);
  fill_random(x, 100, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("math_functions", ansor_test_kernels_math_functions, x, log, sqrt, rsqrt, erf, floor, ceil,
                                      pow, float_mod));

  Reference expected_log(shape), expected_sqrt(shape), expected_rsqrt(shape), expected_erf(shape), expected_floor(shape),
      expected_ceil(shape), expected_pow(shape), expected_float_mod(shape);
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    expected_log[i] = std::log(std::fabs(v) + 0.5);
    expected_sqrt[i] = std::sqrt(std::fabs(v));
    expected_rsqrt[i] = 1 / std::sqrt(std::fabs(v) + 0.25);
    expected_erf[i] = std::erf(v);
    // The products are rounded to float as in the kernel, so that floor and ceil see the same
    // value when it lies close to an integer.
    expected_floor[i] = std::floor(x[i] * 3.0f);
    expected_ceil[i] = std::ceil(x[i] * 3.0f);
    expected_pow[i] = std::pow(std::fabs(v) + 0.5, v * 2);
    double scaled = x[i] * 5.0f;
    expected_float_mod[i] = scaled - std::floor(scaled / 1.5) * 1.5;
  }
  expect_close(log, expected_log, kernel_tolerance("math_functions"));
  expect_close(sqrt, expected_sqrt, kernel_tolerance("math_functions"));
  expect_close(rsqrt, expected_rsqrt, kernel_tolerance("math_functions"));
  expect_close(erf, expected_erf, kernel_tolerance("math_functions"));
  expect_close(floor, expected_floor, 0.0);
  expect_close(ceil, expected_ceil, 0.0);
  expect_close(pow, expected_pow, kernel_tolerance("math_functions"));
  expect_close(float_mod, expected_float_mod, kernel_tolerance("math_functions"));
}

}  // namespace
}  // namespace kernel_tests
