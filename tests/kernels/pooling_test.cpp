// Tests of max_pool2d and avg_pool2d over NCHW with padding: max ignores the padding (it pads
// with -inf, or the lowest integer), avg divides by the number of in-bounds elements of each
// window, so the edge windows are where mistakes show.
#include "reference.h"

#include <algorithm>
#include <limits>

namespace kernel_tests {
namespace {

struct PoolWindow {
  int size_h, size_w, stride_h, stride_w, pad_top, pad_left;
};

enum class PoolKind { Max, Average };

// Reduces the in-bounds elements of each window of x[N, C, H, W] into y of the given shape.
Reference pool_reference(const Reference& x, const PoolWindow& p, PoolKind kind, std::vector<int64_t> out_shape) {
  Reference y(std::move(out_shape));
  const auto& xs = x.shape();
  const auto& ys = y.shape();
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t c = 0; c < ys[1]; ++c)
      for (int64_t oh = 0; oh < ys[2]; ++oh)
        for (int64_t ow = 0; ow < ys[3]; ++ow) {
          double max = -std::numeric_limits<double>::infinity(), sum = 0;
          int count = 0;
          for (int64_t r = 0; r < p.size_h; ++r)
            for (int64_t s = 0; s < p.size_w; ++s) {
              int64_t ih = oh * p.stride_h - p.pad_top + r, iw = ow * p.stride_w - p.pad_left + s;
              if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
              max = std::max(max, x(n, c, ih, iw));
              sum += x(n, c, ih, iw);
              ++count;
            }
          y(n, c, oh, ow) = kind == PoolKind::Max ? max : sum / count;
        }
  return y;
}

TEST(Pooling, MaxPoolPadded) {
  Tensor<float> x({1, 3, 9, 9}), y({1, 3, 5, 5});
  fill_random(x, 41, -2.0, -1.0);  // all negative: a zero-padded window would show 0
  ASSERT_NO_FATAL_FAILURE(call_kernel("max_pool", ansor_test_kernels_max_pool, x, y));
  expect_close(y, pool_reference(widen(x), {3, 3, 2, 2, 1, 1}, PoolKind::Max, {1, 3, 5, 5}), 0.0);
}

TEST(Pooling, AvgPoolPaddedDividesByInBoundsCount) {
  Tensor<float> x({1, 3, 9, 9}), y({1, 3, 5, 5});
  fill_random(x, 42, 0.5, 1.5);
  ASSERT_NO_FATAL_FAILURE(call_kernel("avg_pool", ansor_test_kernels_avg_pool, x, y));
  expect_close(y, pool_reference(widen(x), {3, 3, 2, 2, 1, 1}, PoolKind::Average, {1, 3, 5, 5}), kernel_tolerance("avg_pool"));
}

TEST(Pooling, AvgPoolRectangularWindowAsymmetricPad) {
  Tensor<float> x({2, 2, 6, 7}), y({2, 2, 6, 7});
  fill_random(x, 43, 0.5, 1.5);
  ASSERT_NO_FATAL_FAILURE(call_kernel("avg_pool_asymmetric", ansor_test_kernels_avg_pool_asymmetric, x, y));
  expect_close(y, pool_reference(widen(x), {2, 3, 1, 1, 1, 0}, PoolKind::Average, {2, 2, 6, 7}), kernel_tolerance("avg_pool_asymmetric"));
}

TEST(Pooling, MaxPoolI8PadsWithLowestValue) {
  Tensor<int8_t> x({1, 2, 5, 5}), y({1, 2, 3, 3});
  fill_random(x, 44, -128, -1);
  ASSERT_NO_FATAL_FAILURE(call_kernel("max_pool_i8", ansor_test_kernels_max_pool_i8, x, y));
  expect_close(y, pool_reference(widen(x), {2, 2, 2, 2, 1, 1}, PoolKind::Max, {1, 2, 3, 3}), kernel_tolerance("max_pool_i8"));
}

}  // namespace
}  // namespace kernel_tests
