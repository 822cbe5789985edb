// Tests of the convolution built-ins: conv1d_ncw, conv2d_nchw (stride, padding lists, dilation,
// groups, fused bias and relu), conv2d_nhwc (with groups), depthwise_conv2d_nchw (stride 2 and a
// channel multiplier), conv2d_transpose_nchw and conv3d_ncdhw.
#include "reference.h"

#include <algorithm>

namespace kernel_tests {
namespace {

TEST(Convolution, Conv1dStridePadDilation) {
  Tensor<float> x({2, 3, 20}), w({4, 3, 3}), y({2, 4, 9});
  fill_random(x, 11);
  fill_random(w, 12);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv1d", ansor_test_kernels_conv1d, x, w, y));

  // A 1-d convolution is a 2-d one over a height of 1.
  ConvParams p;
  p.stride_w = 2;
  p.pad_left = p.pad_right = 1;
  p.dilation_w = 2;
  Reference expected = conv2d_nchw_reference(widen(x).reshaped({2, 3, 1, 20}), widen(w).reshaped({4, 3, 1, 3}), p);
  expect_close(y, expected.reshaped({2, 4, 9}), kernel_tolerance("conv1d"));
}

TEST(Convolution, Conv2dStride2) {
  Tensor<float> x({1, 3, 9, 9}), w({4, 3, 3, 3}), y({1, 4, 5, 5});
  fill_random(x, 13);
  fill_random(w, 14);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_stride2", ansor_test_kernels_conv2d_stride2, x, w, y));

  ConvParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  expect_close(y, conv2d_nchw_reference(widen(x), widen(w), p), kernel_tolerance("conv2d_stride2"));
}

TEST(Convolution, Conv2dDilation2AsymmetricPad) {
  Tensor<float> x({2, 2, 10, 9}), w({3, 2, 3, 3}), y({2, 3, 9, 7});
  fill_random(x, 15);
  fill_random(w, 16);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_dilation2", ansor_test_kernels_conv2d_dilation2, x, w, y));

  ConvParams p;
  p.pad_top = 1;
  p.pad_left = 2;
  p.pad_bottom = 2;
  p.pad_right = 0;
  p.dilation_h = p.dilation_w = 2;
  expect_close(y, conv2d_nchw_reference(widen(x), widen(w), p), kernel_tolerance("conv2d_dilation2"));
}

TEST(Convolution, Conv2dGroups2BiasRelu) {
  Tensor<float> x({1, 4, 7, 7}), w({6, 2, 3, 3}), bias({6}), y({1, 6, 7, 7});
  fill_random(x, 17);
  fill_random(w, 18);
  fill_random(bias, 19);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_groups2_bias_relu", ansor_test_kernels_conv2d_groups2_bias_relu, x, w, bias, y));

  ConvParams p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.groups = 2;
  Reference expected = conv2d_nchw_reference(widen(x), widen(w), p);
  for (int k = 0; k < 6; ++k)
    for (int h = 0; h < 7; ++h)
      for (int v = 0; v < 7; ++v) expected(0, k, h, v) = std::max(expected(0, k, h, v) + bias(k), 0.0);
  expect_close(y, expected, kernel_tolerance("conv2d_groups2_bias_relu"));
}

// NHWC results from the NCHW reference on transposed copies: x[n, h, w, c] and w[r, s, c, k].
Reference nhwc_conv_reference(const Tensor<float>& x, const Tensor<float>& w, const ConvParams& p) {
  const auto& xs = x.shape();
  const auto& ws = w.shape();
  Reference x_nchw({xs[0], xs[3], xs[1], xs[2]}), w_kcrs({ws[3], ws[2], ws[0], ws[1]});
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t h = 0; h < xs[1]; ++h)
      for (int64_t v = 0; v < xs[2]; ++v)
        for (int64_t c = 0; c < xs[3]; ++c) x_nchw(n, c, h, v) = x(n, h, v, c);
  for (int64_t r = 0; r < ws[0]; ++r)
    for (int64_t s = 0; s < ws[1]; ++s)
      for (int64_t c = 0; c < ws[2]; ++c)
        for (int64_t k = 0; k < ws[3]; ++k) w_kcrs(k, c, r, s) = w(r, s, c, k);
  Reference nchw = conv2d_nchw_reference(x_nchw, w_kcrs, p);
  const auto& os = nchw.shape();
  Reference nhwc({os[0], os[2], os[3], os[1]});
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t k = 0; k < os[1]; ++k)
      for (int64_t h = 0; h < os[2]; ++h)
        for (int64_t v = 0; v < os[3]; ++v) nhwc(n, h, v, k) = nchw(n, k, h, v);
  return nhwc;
}

TEST(Convolution, Conv2dNhwcStrideList) {
  Tensor<float> x({1, 8, 7, 3}), w({3, 3, 3, 5}), y({1, 4, 7, 5});
  fill_random(x, 20);
  fill_random(w, 21);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_nhwc", ansor_test_kernels_conv2d_nhwc, x, w, y));

  ConvParams p;
  p.stride_h = 2;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  expect_close(y, nhwc_conv_reference(x, w, p), kernel_tolerance("conv2d_nhwc"));
}

TEST(Convolution, Conv2dNhwcGroups2Dilation2) {
  Tensor<float> x({2, 6, 6, 4}), w({3, 3, 2, 6}), y({2, 6, 6, 6});
  fill_random(x, 22);
  fill_random(w, 23);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_nhwc_groups2", ansor_test_kernels_conv2d_nhwc_groups2, x, w, y));

  ConvParams p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 2;
  p.dilation_h = p.dilation_w = 2;
  p.groups = 2;
  expect_close(y, nhwc_conv_reference(x, w, p), kernel_tolerance("conv2d_nhwc_groups2"));
}

// Depthwise W[C, M, R, S] is a grouped convolution with C groups and weight [C·M, 1, R, S]:
// output channel c·M + m reads input channel c.
TEST(Convolution, DepthwiseStride2) {
  Tensor<float> x({1, 3, 8, 8}), w({3, 1, 3, 3}), y({1, 3, 4, 4});
  fill_random(x, 24);
  fill_random(w, 25);
  ASSERT_NO_FATAL_FAILURE(call_kernel("depthwise_stride2", ansor_test_kernels_depthwise_stride2, x, w, y));

  ConvParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.groups = 3;
  expect_close(y, conv2d_nchw_reference(widen(x), widen(w), p), kernel_tolerance("depthwise_stride2"));
}

TEST(Convolution, DepthwiseChannelMultiplier2) {
  Tensor<float> x({1, 3, 7, 7}), w({3, 2, 3, 3}), y({1, 6, 7, 7});
  fill_random(x, 26);
  fill_random(w, 27);
  ASSERT_NO_FATAL_FAILURE(call_kernel("depthwise_multiplier2", ansor_test_kernels_depthwise_multiplier2, x, w, y));

  ConvParams p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.groups = 3;
  expect_close(y, conv2d_nchw_reference(widen(x), widen(w).reshaped({6, 1, 3, 3}), p), kernel_tolerance("depthwise_multiplier2"));
}

// The transposed convolution scatters: input (ih, iw) adds x · w[c, k, r, s] to output
// (ih · stride − pad + r, iw · stride − pad + s) where that lies inside the output.
// The transposed convolution by its definition: every input element scatters its window into
// the output at ih * stride - pad + r.
Reference conv2d_transpose_reference(const Tensor<float>& x, const Tensor<float>& w, const std::vector<int64_t>& out_shape,
                                     int stride_h, int stride_w, int pad_h, int pad_w) {
  Reference expected(out_shape);
  const auto &xs = x.shape(), &ws = w.shape();
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t ih = 0; ih < xs[2]; ++ih)
        for (int64_t iw = 0; iw < xs[3]; ++iw)
          for (int64_t k = 0; k < ws[1]; ++k)
            for (int64_t r = 0; r < ws[2]; ++r)
              for (int64_t s = 0; s < ws[3]; ++s) {
                int64_t oh = ih * stride_h - pad_h + r, ow = iw * stride_w - pad_w + s;
                if (oh >= 0 && oh < out_shape[2] && ow >= 0 && ow < out_shape[3])
                  expected(n, k, oh, ow) += double{x(n, c, ih, iw)} * w(c, k, r, s);
              }
  return expected;
}

TEST(Convolution, Conv2dTransposeStride2Pad1OutputPad1) {
  Tensor<float> x({1, 3, 5, 4}), w({3, 2, 3, 3}), y({1, 2, 10, 8});
  fill_random(x, 28);
  fill_random(w, 29);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_transpose", ansor_test_kernels_conv2d_transpose, x, w, y));
  expect_close(y, conv2d_transpose_reference(x, w, {1, 2, 10, 8}, 2, 2, 1, 1), kernel_tolerance("conv2d_transpose"));
}

// Windows that the strides do not divide (4 rows by 3, 3 columns by 2) and padding as wide as
// the window's reach: the phases have different tap counts.
TEST(Convolution, Conv2dTransposeUnevenPhases) {
  Tensor<float> x({2, 2, 4, 5}), w({2, 3, 4, 3}), y({2, 3, 11, 12});
  fill_random(x, 32);
  fill_random(w, 33);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv2d_transpose_uneven", ansor_test_kernels_conv2d_transpose_uneven, x, w, y));
  expect_close(y, conv2d_transpose_reference(x, w, {2, 3, 11, 12}, 3, 2, 2, 0), kernel_tolerance("conv2d_transpose_uneven"));
}

TEST(Convolution, Conv3dStrideList) {
  Tensor<float> x({1, 2, 5, 6, 6}), w({3, 2, 3, 3, 3}), y({1, 3, 5, 3, 3});
  fill_random(x, 30);
  fill_random(w, 31);
  ASSERT_NO_FATAL_FAILURE(call_kernel("conv3d", ansor_test_kernels_conv3d, x, w, y));

  const int stride[3] = {1, 2, 2}, pad = 1;
  Reference expected({1, 3, 5, 3, 3});
  for (int k = 0; k < 3; ++k)
    for (int od = 0; od < 5; ++od)
      for (int oh = 0; oh < 3; ++oh)
        for (int ow = 0; ow < 3; ++ow)
          for (int c = 0; c < 2; ++c)
            for (int t = 0; t < 3; ++t)
              for (int r = 0; r < 3; ++r)
                for (int s = 0; s < 3; ++s) {
                  int id = od * stride[0] - pad + t, ih = oh * stride[1] - pad + r, iw = ow * stride[2] - pad + s;
                  if (id < 0 || id >= 5 || ih < 0 || ih >= 6 || iw < 0 || iw >= 6) continue;
                  expected(0, k, od, oh, ow) += double{x(0, c, id, ih, iw)} * w(k, c, t, r, s);
                }
  expect_close(y, expected, kernel_tolerance("conv3d"));
}

}  // namespace
}  // namespace kernel_tests
