// Tests of dtypes other than f32: i32 arithmetic that wraps around (two's complement) with floor
// division and modulo, i8 and u8 arithmetic, f64, f16 and bf16 storage (computed in float, stored
// as uint16_t), bool outputs from comparisons and bool inputs, and casts between dtypes.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kernel_tests {
namespace {

// The 32-bit two's-complement value of x (the result of wrapping arithmetic).
int32_t wrap32(int64_t x) { return static_cast<int32_t>(static_cast<uint32_t>(x)); }

// x rounded to nearest-even with `mantissa_bits` explicit mantissa bits (10 for f16, 7 for bf16),
// for values in the normal range of the format or above its subnormal step `min_step`.
double round_to_format(double x, int mantissa_bits, double min_step) {
  if (x == 0) return x;
  double step = std::max(std::ldexp(1.0, std::ilogb(x) - mantissa_bits), min_step);
  return std::nearbyint(x / step) * step;
}
double round_to_f16(double x) { return round_to_format(x, 10, std::ldexp(1.0, -24)); }
double round_to_bf16(double x) { return round_to_format(x, 7, std::ldexp(1.0, -133)); }

TEST(Dtypes, I32ArithmeticWrapsAndFloors) {
  const std::vector<int64_t> shape = {64};
  Tensor<int32_t> a(shape), b(shape), sum(shape), difference(shape), product(shape), quotient(shape), remainder(shape),
      negated(shape);
  fill_random(a, 111, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  fill_random(b, 112, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  for (size_t i = 0; i < 16; ++i) b[i] = static_cast<int32_t>(i) - 8;  // small divisors of both signs
  a[0] = std::numeric_limits<int32_t>::min();  // its negation wraps to itself; b[0] = -8, not -1
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] == 0) b[i] = 3;
  ASSERT_NO_FATAL_FAILURE(call_kernel("i32_arithmetic", ansor_test_kernels_i32_arithmetic, a, b, sum, difference, product,
                                      quotient, remainder, negated));

  Reference expected_sum(shape), expected_difference(shape), expected_product(shape), expected_quotient(shape),
      expected_remainder(shape), expected_negated(shape);
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = a[i], y = b[i];
    expected_sum[i] = wrap32(x + y);
    expected_difference[i] = wrap32(x - y);
    expected_product[i] = wrap32(x * y);
    expected_quotient[i] = static_cast<double>(floor_div(x, y));
    expected_remainder[i] = static_cast<double>(floor_mod(x, y));
    expected_negated[i] = wrap32(-x + 7);
  }
  expect_close(sum, expected_sum, kernel_tolerance("i32_arithmetic"));
  expect_close(difference, expected_difference, kernel_tolerance("i32_arithmetic"));
  expect_close(product, expected_product, kernel_tolerance("i32_arithmetic"));
  expect_close(quotient, expected_quotient, kernel_tolerance("i32_arithmetic"));
  expect_close(remainder, expected_remainder, kernel_tolerance("i32_arithmetic"));
  expect_close(negated, expected_negated, kernel_tolerance("i32_arithmetic"));
}

TEST(Dtypes, I32MatmulWraps) {
  Tensor<int32_t> a({6, 9}), b({9, 5}), c({6, 5});
  fill_random(a, 113, -2000000000, 2000000000);
  fill_random(b, 114, -2000000000, 2000000000);
  ASSERT_NO_FATAL_FAILURE(call_kernel("i32_matmul_wrapping", ansor_test_kernels_i32_matmul_wrapping, a, b, c));

  Reference expected({6, 5});
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) {
      uint32_t sum = 0;  // unsigned arithmetic wraps modulo 2^32 like the kernel's
      for (int k = 0; k < 9; ++k) sum += static_cast<uint32_t>(a(i, k)) * static_cast<uint32_t>(b(k, j));
      expected(i, j) = static_cast<int32_t>(sum);
    }
  expect_close(c, expected, kernel_tolerance("i32_matmul_wrapping"));
}

TEST(Dtypes, I8Arithmetic) {
  const std::vector<int64_t> shape = {40};
  Tensor<int8_t> a(shape), b(shape), sum(shape), product(shape), quotient(shape), remainder(shape), larger(shape);
  fill_random(a, 115, -128, 127);
  fill_random(b, 116, -128, 127);
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] == 0) b[i] = -5;
  ASSERT_NO_FATAL_FAILURE(
      call_kernel("i8_arithmetic", ansor_test_kernels_i8_arithmetic, a, b, sum, product, quotient, remainder, larger));

  Reference expected_sum(shape), expected_product(shape), expected_quotient(shape), expected_remainder(shape),
      expected_larger(shape);
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = a[i], y = b[i];
    expected_sum[i] = static_cast<int8_t>(x + y);
    expected_product[i] = static_cast<int8_t>(x * y);
    expected_quotient[i] = static_cast<int8_t>(floor_div(x, y));  // -128 / -1 wraps to -128
    expected_remainder[i] = static_cast<double>(floor_mod(x, y));
    expected_larger[i] = static_cast<double>(std::max(x, y));
  }
  expect_close(sum, expected_sum, kernel_tolerance("i8_arithmetic"));
  expect_close(product, expected_product, kernel_tolerance("i8_arithmetic"));
  expect_close(quotient, expected_quotient, kernel_tolerance("i8_arithmetic"));
  expect_close(remainder, expected_remainder, kernel_tolerance("i8_arithmetic"));
  expect_close(larger, expected_larger, kernel_tolerance("i8_arithmetic"));
}

TEST(Dtypes, U8ArithmeticWraps) {
  const std::vector<int64_t> shape = {40};
  Tensor<uint8_t> a(shape), b(shape), sum(shape), difference(shape), product(shape), quotient(shape), remainder(shape);
  fill_random(a, 117, 0, 255);
  fill_random(b, 118, 1, 255);
  ASSERT_NO_FATAL_FAILURE(
      call_kernel("u8_arithmetic", ansor_test_kernels_u8_arithmetic, a, b, sum, difference, product, quotient, remainder));

  Reference expected_sum(shape), expected_difference(shape), expected_product(shape), expected_quotient(shape),
      expected_remainder(shape);
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = a[i], y = b[i];
    expected_sum[i] = static_cast<uint8_t>(x + y);
    expected_difference[i] = static_cast<uint8_t>(x - y);
    expected_product[i] = static_cast<uint8_t>(x * y);
    expected_quotient[i] = static_cast<double>(x / y);
    expected_remainder[i] = static_cast<double>(x % y);
  }
  expect_close(sum, expected_sum, kernel_tolerance("u8_arithmetic"));
  expect_close(difference, expected_difference, kernel_tolerance("u8_arithmetic"));
  expect_close(product, expected_product, kernel_tolerance("u8_arithmetic"));
  expect_close(quotient, expected_quotient, kernel_tolerance("u8_arithmetic"));
  expect_close(remainder, expected_remainder, kernel_tolerance("u8_arithmetic"));
}

TEST(Dtypes, F64MatmulAndDoubleLiterals) {
  Tensor<double> a({8, 9}), b({9, 7}), c({8, 7}), d({8, 9});
  fill_random(a, 119);
  fill_random(b, 120);
  ASSERT_NO_FATAL_FAILURE(call_kernel("f64_ops", ansor_test_kernels_f64_ops, a, b, c, d));

  Reference expected_c({8, 7}), expected_d({8, 9});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 7; ++j)
      for (int k = 0; k < 9; ++k) expected_c(i, j) += a(i, k) * b(k, j);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 9; ++j) expected_d(i, j) = std::exp(a(i, j)) * 0.1 + 1e-10;  // 0.1 as a double, not a float
  expect_close(c, expected_c, kernel_tolerance("f64_ops"));
  expect_close(d, expected_d, kernel_tolerance("f64_ops"));
}

TEST(Dtypes, F16Matmul) {
  Tensor<uint16_t> a({8, 16}, ANSOR_DTYPE_F16), b({16, 9}, ANSOR_DTYPE_F16), c({8, 9}, ANSOR_DTYPE_F16);
  fill_random(a, 121, -2.0, 2.0);
  fill_random(b, 122, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("f16_matmul", ansor_test_kernels_f16_matmul, a, b, c));

  Reference x = widen(a), y = widen(b), expected({8, 9});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 9; ++j)
      for (int k = 0; k < 16; ++k) expected(i, j) += x(i, k) * y(k, j);
  expect_close(c, expected, kernel_tolerance("f16_matmul"));
}

TEST(Dtypes, F16Elementwise) {
  const std::vector<int64_t> shape = {30};
  Tensor<uint16_t> x(shape, ANSOR_DTYPE_F16), y(shape, ANSOR_DTYPE_F16), z(shape, ANSOR_DTYPE_F16), g(shape, ANSOR_DTYPE_F16);
  fill_random(x, 123, -3.0, 3.0);
  fill_random(y, 124, -3.0, 3.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("f16_elementwise", ansor_test_kernels_f16_elementwise, x, y, z, g));

  Reference expected_z(shape), expected_g(shape);
  for (size_t i = 0; i < x.size(); ++i) {
    double u = x.value(i), v = y.value(i);
    expected_z[i] = u * v + 1.5;
    expected_g[i] = u * (1 + std::erf(u / std::sqrt(2.0))) / 2;
  }
  expect_close(z, expected_z, kernel_tolerance("f16_elementwise"));
  expect_close(g, expected_g, kernel_tolerance("f16_elementwise"));
}

TEST(Dtypes, BF16Conv2d) {
  Tensor<uint16_t> x({1, 2, 6, 6}, ANSOR_DTYPE_BF16), w({3, 2, 3, 3}, ANSOR_DTYPE_BF16), y({1, 3, 6, 6}, ANSOR_DTYPE_BF16);
  fill_random(x, 125, -2.0, 2.0);
  fill_random(w, 126, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("bf16_conv2d", ansor_test_kernels_bf16_conv2d, x, w, y));

  ConvParams p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  expect_close(y, conv2d_nchw_reference(widen(x), widen(w), p), kernel_tolerance("bf16_conv2d"));
}

TEST(Dtypes, BF16Softmax) {
  Tensor<uint16_t> x({4, 10}, ANSOR_DTYPE_BF16), y({4, 10}, ANSOR_DTYPE_BF16);
  fill_random(x, 127, -3.0, 3.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("bf16_softmax", ansor_test_kernels_bf16_softmax, x, y));

  Reference v = widen(x), expected({4, 10});
  for (int i = 0; i < 4; ++i) {
    double max = v(i, 0), sum = 0;
    for (int j = 0; j < 10; ++j) max = std::max(max, v(i, j));
    for (int j = 0; j < 10; ++j) sum += std::exp(v(i, j) - max);
    for (int j = 0; j < 10; ++j) expected(i, j) = std::exp(v(i, j) - max) / sum;
  }
  expect_close(y, expected, kernel_tolerance("bf16_softmax"));
}

TEST(Dtypes, BoolOutputsOfComparisons) {
  Tensor<float> x({6, 7}), y({7});
  Tensor<bool> greater({6, 7}), in_range({6, 7}), odd({6});
  fill_random(x, 128);
  fill_random(y, 129);
  for (int i = 0; i < 6; ++i) x(i, i) = y(i);  // some equal pairs for ==
  ASSERT_NO_FATAL_FAILURE(call_kernel("comparisons", ansor_test_kernels_comparisons, x, y, greater, in_range, odd));

  Reference expected_greater({6, 7}), expected_in_range({6, 7}), expected_odd({6});
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 7; ++j) {
      expected_greater(i, j) = x(i, j) > y(j);
      expected_in_range(i, j) = (x(i, j) >= -0.5f && x(i, j) < 0.5f) || x(i, j) == y(j);
    }
    expected_odd(i) = i % 2 != 0;
  }
  expect_close(greater, expected_greater, kernel_tolerance("comparisons"));
  expect_close(in_range, expected_in_range, kernel_tolerance("comparisons"));
  expect_close(odd, expected_odd, kernel_tolerance("comparisons"));
}

TEST(Dtypes, BoolMaskInput) {
  Tensor<float> x({5, 6}), y({5, 6});
  Tensor<bool> mask({5, 6});
  fill_random(x, 130);
  fill_random(mask, 131);
  ASSERT_NO_FATAL_FAILURE(call_kernel("bool_mask", ansor_test_kernels_bool_mask, x, mask, y));

  Reference expected({5, 6});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j) expected(i, j) = mask(i, j) && !(x(i, j) < 0) ? x(i, j) : -1.0;
  expect_close(y, expected, 0.0);
}

TEST(Dtypes, Casts) {
  const std::vector<int64_t> shape = {32};
  Tensor<float> x(shape), half_round_trip(shape);
  Tensor<int8_t> small(shape), narrowed(shape);
  Tensor<int32_t> truncated(shape);
  Tensor<uint16_t> half(shape, ANSOR_DTYPE_F16), brain(shape, ANSOR_DTYPE_BF16);
  Tensor<double> widened(shape);
  Tensor<uint8_t> bytes(shape);
  Tensor<bool> nonzero(shape);
  fill_random(x, 132, -6.0, 6.0);
  fill_random(small, 133, -3, 3);
  ASSERT_NO_FATAL_FAILURE(call_kernel("casts", ansor_test_kernels_casts, x, small, truncated, half, brain, half_round_trip,
                                      widened, narrowed, bytes, nonzero));

  Reference expected_truncated(shape), expected_half(shape), expected_brain(shape), expected_widened(shape),
      expected_narrowed(shape), expected_bytes(shape), expected_nonzero(shape);
  for (size_t i = 0; i < x.size(); ++i) {
    expected_truncated[i] = std::trunc(x[i]);
    expected_half[i] = round_to_f16(x[i]);
    expected_brain[i] = round_to_bf16(x[i]);
    expected_widened[i] = small[i] * 0.5;
    expected_narrowed[i] = static_cast<int8_t>(static_cast<int32_t>(std::trunc(x[i])) * 40);
    expected_bytes[i] = static_cast<uint8_t>(small[i]);
    expected_nonzero[i] = small[i] != 0;
  }
  const double exact = 0.0;
  expect_close(truncated, expected_truncated, kernel_tolerance("casts"));
  expect_close(half, expected_half, exact);
  expect_close(brain, expected_brain, exact);
  // Converting to f16 rounds even when the value goes on in float.
  expect_close(half_round_trip, expected_half, exact);
  expect_close(widened, expected_widened, kernel_tolerance("casts"));
  expect_close(narrowed, expected_narrowed, kernel_tolerance("casts"));
  expect_close(bytes, expected_bytes, kernel_tolerance("casts"));
  expect_close(nonzero, expected_nonzero, kernel_tolerance("casts"));
}

}  // namespace
}  // namespace kernel_tests
