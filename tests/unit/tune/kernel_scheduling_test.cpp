// Kernel tuning under the task scheduler: which kernels count as alike, and the round history a
// resumed run rebuilds from the cache's records.
#include "tune/kernel_scheduling.h"

#include <gtest/gtest.h>

#include <limits>

#include "test_support.h"

namespace ansor {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(KernelSchedulingTest, KernelsThatDifferOnlyInSizesAreAlike) {
  Program p = test::parse(R"(
kernel conv_a {
  X = input f32[1, 64, 56, 56]
  W = const f32[64, 64, 3, 3]
  Y = relu(conv2d_nchw(X, W, stride = 1, pad = 1))
}
kernel conv_b {
  X = input f32[1, 128, 28, 28]
  W = const f32[256, 128, 3, 3]
  Y = relu(conv2d_nchw(X, W, stride = 1, pad = 1))
}
kernel conv_strided {
  X = input f32[1, 128, 28, 28]
  W = const f32[256, 128, 3, 3]
  Y = relu(conv2d_nchw(X, W, stride = 2, pad = 1))
}
kernel mm {
  A = input f32[64, 64]
  B = input f32[64, 64]
  C = matmul(A, B)
}
kernel mm_f64 {
  A = input f64[64, 64]
  B = input f64[64, 64]
  C = matmul(A, B)
}
kernel scaled {
  X = input f32[64]
  Y[i:64] = X[i] * 0.5
}
kernel scaled_other {
  X = input f32[128]
  Y[i:128] = X[i] * 2.5e-3
}
)");
  auto key = [&](const char* name) { return structure_key(p.find(name)->dag); };
  EXPECT_EQ(key("conv_a"), key("conv_b"));
  EXPECT_NE(key("conv_a"), key("mm"));
  EXPECT_NE(key("mm"), key("mm_f64")) << "dtypes are part of the structure";
  EXPECT_EQ(key("scaled"), key("scaled_other")) << "float constants are sizes too";
  // Extents become '#'; names keep their digits.
  EXPECT_EQ(key("mm"), "T0 = input f32[#, #]\nT1 = input f32[#, #]\nT2[i0:#, i1:#] = f32(sum(r0:#, T0[i0, r0] * T1[r0, i1]))\noutputs T2\n");
  // A strided convolution reads its input through another index expression: not alike.
  EXPECT_NE(key("conv_b"), key("conv_strided"));
}

TEST(KernelSchedulingTest, RoundHistoryIsTheBestAfterEachBatch) {
  EXPECT_EQ(round_history({}, 4), std::vector<double>{});
  EXPECT_EQ(round_history({5, 3, 4, 6, 2, kInf, 7}, 2), (std::vector<double>{3, 3, 2, 2}));
  EXPECT_EQ(round_history({kInf, kInf, 1}, 2), (std::vector<double>{kInf, 1}));
  EXPECT_EQ(round_history({9, 8, 7}, 16), std::vector<double>{7});
}

}  // namespace
}  // namespace ansor
