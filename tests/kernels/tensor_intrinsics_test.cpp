// Kernels that the CPU's tensor instructions compute where the CPU has them (AMX's tile
// products, the dot products of AVX512-BF16 and VNNI: bf16 pairs summed in f32, 8-bit quads
// summed in i32), checked against references computed here: the integer ones exactly, the bf16
// ones within the tolerance of another f32 summation order. On a CPU without the instructions
// the same kernels run in plain arithmetic and pass the same checks; tests/amx_emulation runs
// them on an emulation of AMX, and tests/cuda_emulation those a GPU's tensor cores compute on an
// emulation of mma.sync.
#include "reference.h"

#include <algorithm>
#include <cstdint>

namespace kernel_tests {
namespace {

TEST(TensorIntrinsics, Bf16DenseWithBiasAndRelu) {
  Tensor<uint16_t> x({40, 24}, ANSOR_DTYPE_BF16), w({32, 24}, ANSOR_DTYPE_BF16), y({40, 32}, ANSOR_DTYPE_BF16);
  Tensor<float> bias({32});
  fill_random(x, 301, -2.0, 2.0);
  fill_random(w, 302, -2.0, 2.0);
  fill_random(bias, 303, -4.0, 4.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel("bf16_dense_bias_relu", ansor_test_kernels_bf16_dense_bias_relu, x, w, bias, y));

  Reference vx = widen(x), vw = widen(w), expected({40, 32});
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 32; ++j) {
      double sum = 0;
      for (int k = 0; k < 24; ++k) sum += vx(i, k) * vw(j, k);
      expected(i, j) = std::max(sum + bias(j), 0.0);
    }
  expect_close(y, expected, kernel_tolerance("bf16_dense_bias_relu"));
}

// C = A B over 8-bit operands of the given types, summed exactly in i32.
template <class A, class B>
void check_integer_matmul(const std::string& name, int (*kernel)(const A*, const B*, int32_t*), int64_t m, int64_t k, int64_t n) {
  Tensor<A> a({m, k});
  Tensor<B> b({k, n});
  Tensor<int32_t> c({m, n});
  // The extremes of each type included: products up to 255 * -128 in every lane.
  fill_random(a, 304, std::is_signed_v<A> ? -128.0 : 0.0, std::is_signed_v<A> ? 127.0 : 255.0);
  fill_random(b, 305, std::is_signed_v<B> ? -128.0 : 0.0, std::is_signed_v<B> ? 127.0 : 255.0);
  a[0] = std::is_signed_v<A> ? -128 : 255;
  b[0] = std::is_signed_v<B> ? -128 : 255;
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, a, b, c));

  Reference expected({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t r = 0; r < k; ++r) sum += int64_t{a(i, r)} * int64_t{b(r, j)};
      expected(i, j) = static_cast<double>(sum);
    }
  expect_close(c, expected, 0.0);
}

TEST(TensorIntrinsics, U8TimesS8MatmulIsExact) {
  check_integer_matmul<uint8_t, int8_t>("u8s8_matmul", ansor_test_kernels_u8s8_matmul, 7, 20, 48);
}

TEST(TensorIntrinsics, S8TimesU8MatmulIsExact) {
  check_integer_matmul<int8_t, uint8_t>("s8u8_matmul", ansor_test_kernels_s8u8_matmul, 24, 16, 32);
}

// The 3 x 3 NHWC convolution with padding 1 of `x` (one image) by `w`, in doubles.
template <class X, class W>
Reference nhwc_convolution(const Tensor<X>& image, const Tensor<W>& weights) {
  const Reference x = widen(image), w = widen(weights);
  const int64_t height = x.shape()[1], width = x.shape()[2], channels = x.shape()[3], outputs = w.shape()[3];
  Reference expected({1, height, width, outputs});
  for (int64_t h = 0; h < height; ++h)
    for (int64_t c = 0; c < width; ++c)
      for (int64_t o = 0; o < outputs; ++o) {
        double sum = 0;
        for (int64_t rh = 0; rh < 3; ++rh)
          for (int64_t rw = 0; rw < 3; ++rw)
            for (int64_t i = 0; i < channels; ++i) {
              const int64_t ih = h + rh - 1, iw = c + rw - 1;
              if (ih >= 0 && ih < height && iw >= 0 && iw < width) sum += x(0, ih, iw, i) * w(rh, rw, i, o);
            }
        expected(0, h, c, o) = sum;
      }
  return expected;
}

// A 3 x 3 NHWC convolution of a height x width image with padding 1, `channels` in, `outputs` out.
void check_bf16_nhwc_convolution(const std::string& name, int (*kernel)(const uint16_t*, const uint16_t*, float*), int height, int width,
                                 int channels, int outputs) {
  Tensor<uint16_t> x({1, height, width, channels}, ANSOR_DTYPE_BF16), w({3, 3, channels, outputs}, ANSOR_DTYPE_BF16);
  Tensor<float> y({1, height, width, outputs});
  fill_random(x, 306, -2.0, 2.0);
  fill_random(w, 307, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, x, w, y));
  expect_close(y, nhwc_convolution(x, w), kernel_tolerance(name));
}

TEST(TensorIntrinsics, Bf16NhwcConvolutionOverAPadding) {
  check_bf16_nhwc_convolution("bf16_conv2d_nhwc_widened", ansor_test_kernels_bf16_conv2d_nhwc_widened, 5, 5, 6, 16);
}

// Y = X W^T of an m x k X and an n x k W in bf16, summed in f32.
void check_bf16_dense(const std::string& name, int (*kernel)(const uint16_t*, const uint16_t*, float*), int64_t m, int64_t k, int64_t n) {
  Tensor<uint16_t> x({m, k}, ANSOR_DTYPE_BF16), w({n, k}, ANSOR_DTYPE_BF16);
  Tensor<float> y({m, n});
  fill_random(x, 308, -2.0, 2.0);
  fill_random(w, 309, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, x, w, y));

  Reference vx = widen(x), vw = widen(w), expected({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t r = 0; r < k; ++r) sum += vx(i, r) * vw(j, r);
      expected(i, j) = sum;
    }
  expect_close(y, expected, kernel_tolerance(name));
}

TEST(TensorIntrinsics, RaggedBf16Dense) { check_bf16_dense("bf16_dense_ragged", ansor_test_kernels_bf16_dense_ragged, 9, 27, 40); }

TEST(TensorIntrinsics, RaggedU8TimesS8MatmulIsExact) {
  check_integer_matmul<uint8_t, int8_t>("u8s8_matmul_ragged", ansor_test_kernels_u8s8_matmul_ragged, 5, 30, 20);
}

TEST(TensorIntrinsics, Bf16NhwcConvolutionOfThreeChannels) {
  check_bf16_nhwc_convolution("bf16_conv2d_nhwc_rgb", ansor_test_kernels_bf16_conv2d_nhwc_rgb, 6, 6, 3, 32);
}

// C[n, i, j] = sum over k of A[n, i, k] B[n, k, j] in bf16, summed in f32; with `b_transposed`,
// B is stored [n, j, k] (attention's keys).
void check_bf16_batch_product(const std::string& name, int (*kernel)(const uint16_t*, const uint16_t*, float*), int64_t batch, int64_t m,
                              int64_t k, int64_t n, bool b_transposed) {
  Tensor<uint16_t> a({batch, m, k}, ANSOR_DTYPE_BF16), b(b_transposed ? std::vector<int64_t>{batch, n, k} : std::vector<int64_t>{batch, k, n},
                                                       ANSOR_DTYPE_BF16);
  Tensor<float> c({batch, m, n});
  fill_random(a, 314, -2.0, 2.0);
  fill_random(b, 315, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, a, b, c));

  Reference va = widen(a), vb = widen(b), expected({batch, m, n});
  for (int64_t h = 0; h < batch; ++h)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t r = 0; r < k; ++r) sum += va(h, i, r) * (b_transposed ? vb(h, j, r) : vb(h, r, j));
        expected(h, i, j) = sum;
      }
  expect_close(c, expected, kernel_tolerance(name));
}

TEST(TensorIntrinsics, Bf16ProductOfTwoActivations) {
  check_bf16_batch_product("bf16_attention_scores", ansor_test_kernels_bf16_attention_scores, 2, 16, 32, 24, true);
}

TEST(TensorIntrinsics, U8TimesS8ProductOfTwoActivationsIsExact) {
  check_integer_matmul<uint8_t, int8_t>("u8s8_matmul_activations", ansor_test_kernels_u8s8_matmul_activations, 16, 64, 32);
}

// Y = bf16(relu(X W^T + bias)) of an m x k X and an n x k W.
void check_bf16_dense_bias_relu(const std::string& name, int (*kernel)(const uint16_t*, const uint16_t*, const float*, uint16_t*), int64_t m,
                                int64_t k, int64_t n) {
  Tensor<uint16_t> x({m, k}, ANSOR_DTYPE_BF16), w({n, k}, ANSOR_DTYPE_BF16), y({m, n}, ANSOR_DTYPE_BF16);
  Tensor<float> bias({n});
  fill_random(x, 311, -2.0, 2.0);
  fill_random(w, 312, -2.0, 2.0);
  fill_random(bias, 313, -4.0, 4.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, x, w, bias, y));

  Reference vx = widen(x), vw = widen(w), expected({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t r = 0; r < k; ++r) sum += vx(i, r) * vw(j, r);
      expected(i, j) = std::max(sum + bias(j), 0.0);
    }
  expect_close(y, expected, kernel_tolerance(name));
}

TEST(TensorIntrinsics, Bf16DenseTilesWithBiasAndRelu) {
  check_bf16_dense_bias_relu("bf16_dense_tiles", ansor_test_kernels_bf16_dense_tiles, 64, 96, 64);
}

TEST(TensorIntrinsics, Bf16DenseTilesOfRaggedOutputsWithBiasAndRelu) {
  check_bf16_dense_bias_relu("bf16_dense_tiles_ragged_outputs", ansor_test_kernels_bf16_dense_tiles_ragged_outputs, 16, 64, 40);
}

TEST(TensorIntrinsics, U8TimesS8MatmulTilesOfRaggedOutputsAreExact) {
  check_integer_matmul<uint8_t, int8_t>("u8s8_matmul_tiles_ragged_outputs", ansor_test_kernels_u8s8_matmul_tiles_ragged_outputs, 32, 64, 20);
}

TEST(TensorIntrinsics, U8TimesS8MatmulTilesAreExact) {
  check_integer_matmul<uint8_t, int8_t>("u8s8_matmul_tiles", ansor_test_kernels_u8s8_matmul_tiles, 32, 128, 48);
}

TEST(TensorIntrinsics, S8TimesS8MatmulTilesAreExact) {
  check_integer_matmul<int8_t, int8_t>("s8s8_matmul_tiles", ansor_test_kernels_s8s8_matmul_tiles, 48, 64, 32);
}

TEST(TensorIntrinsics, Bf16BatchMatmulTiles) {
  check_bf16_batch_product("bf16_batch_matmul_tiles", ansor_test_kernels_bf16_batch_matmul_tiles, 2, 16, 64, 32, false);
}

TEST(TensorIntrinsics, Bf16DenseTilesOfTenRows) {
  check_bf16_dense("bf16_dense_tiles_of_10_rows", ansor_test_kernels_bf16_dense_tiles_of_10_rows, 20, 64, 32);
}

TEST(TensorIntrinsics, Bf16NhwcConvolutionTilesOfFourteenPixels) {
  check_bf16_nhwc_convolution("bf16_conv2d_tiles", ansor_test_kernels_bf16_conv2d_tiles, 4, 14, 32, 16);
}

TEST(TensorIntrinsics, U8TimesS8NhwcConvolutionTilesOfSevenPixelsAreExact) {
  Tensor<uint8_t> x({1, 3, 7, 64});
  Tensor<int8_t> w({3, 3, 64, 32});
  Tensor<int32_t> c({1, 3, 7, 32});
  fill_random(x, 318, 0.0, 255.0);
  fill_random(w, 319, -128.0, 127.0);
  x[0] = 255;
  w[0] = -128;
  ASSERT_NO_FATAL_FAILURE(call_kernel("u8s8_conv2d_tiles", ansor_test_kernels_u8s8_conv2d_tiles, x, w, c));
  expect_close(c, nhwc_convolution(x, w), 0.0);
}

// C = A B of f16 operands summed in f32, stored as `Out` (f16 or f32).
template <class Out>
void check_f16_matmul(const std::string& name, int (*kernel)(const uint16_t*, const uint16_t*, Out*), int64_t m, int64_t k, int64_t n) {
  Tensor<uint16_t> a({m, k}, ANSOR_DTYPE_F16), b({k, n}, ANSOR_DTYPE_F16);
  Tensor<Out> c({m, n}, std::is_same_v<Out, float> ? ANSOR_DTYPE_F32 : ANSOR_DTYPE_F16);
  fill_random(a, 320, -2.0, 2.0);
  fill_random(b, 321, -2.0, 2.0);
  ASSERT_NO_FATAL_FAILURE(call_kernel(name, kernel, a, b, c));

  Reference x = widen(a), y = widen(b), expected({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < k; ++r) expected(i, j) += x(i, r) * y(r, j);
  expect_close(c, expected, kernel_tolerance(name));
}

TEST(TensorIntrinsics, F16MatmulOnTensorCores) {
  check_f16_matmul<uint16_t>("f16_matmul_tensor_cores", ansor_test_kernels_f16_matmul_tensor_cores, 64, 48, 32);
}

TEST(TensorIntrinsics, Bf16NhwcConvolutionOnTensorCores) {
  check_bf16_nhwc_convolution("bf16_conv2d_tensor_cores", ansor_test_kernels_bf16_conv2d_tensor_cores, 3, 20, 32, 16);
}

// tf32() keeps 10 mantissa bits, to nearest: operands of at most 8 significant bits (multiples
// of 1/64 below 2) made inexact by a relative 2^-14 round back to themselves, so the kernel's
// product is exactly that of the unperturbed values, on every target.
TEST(TensorIntrinsics, F32MatmulOfTf32Operands) {
  Tensor<float> a({32, 24}), b({24, 40}), c({32, 40});
  fill_random(a, 322, -2.0, 2.0);
  fill_random(b, 323, -2.0, 2.0);
  Reference exact_a({32, 24}), exact_b({24, 40});
  for (size_t i = 0; i < a.size(); ++i) {
    exact_a[i] = std::round(a[i] * 64) / 64;
    a[i] = static_cast<float>(exact_a[i] * (1 + 0x1p-14));
  }
  for (size_t i = 0; i < b.size(); ++i) {
    exact_b[i] = std::round(b[i] * 64) / 64;
    b[i] = static_cast<float>(exact_b[i] * (1 + 0x1p-14));
  }
  ASSERT_NO_FATAL_FAILURE(call_kernel("f32_matmul_tf32", ansor_test_kernels_f32_matmul_tf32, a, b, c));

  Reference expected({32, 40});
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 40; ++j)
      for (int k = 0; k < 24; ++k) expected(i, j) += exact_a(i, k) * exact_b(k, j);
  expect_close(c, expected, kernel_tolerance("f32_matmul_tf32"));
}

TEST(TensorIntrinsics, F16MatmulOnTensorCoresWithRaggedEdges) {
  check_f16_matmul<float>("f16_matmul_tensor_cores_ragged", ansor_test_kernels_f16_matmul_tensor_cores_ragged, 50, 40, 20);
}

}  // namespace
}  // namespace kernel_tests
