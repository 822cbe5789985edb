// The built-in tensor operators of docs/language.md: each expands into operations with the
// documented output shapes (strides, padding, dilation, groups, broadcasting, layouts), and each
// rejects bad arguments (tensor count, rank, shapes, keywords, values) at the right place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lang_test_util.h"

namespace ansor {
namespace {

using test::body_of;
using test::fails_at;
using test::load_kernel;
using test::names_of;
using test::op_named;
using test::op_names;

using Names = std::vector<std::string>;
using Shape = std::vector<int64_t>;

// A kernel with the given declarations (from line 2) and then `Y = <call>`: with one line of
// declarations, the call starts at column 5 of line 3.
std::string program(const std::string& decls, const std::string& call) {
  return "kernel k {\n" + decls + "\nY = " + call + "\n}";
}

Kernel expand(const std::string& decls, const std::string& call) { return load_kernel(program(decls, call)); }

Shape shape_of(const std::string& decls, const std::string& call) { return op_named(expand(decls, call), "Y").shape; }

// ---- Linear algebra ------------------------------------------------------------------------------

TEST(BuiltinTest, Matmul) {
  Kernel k = expand("A = input f32[3, 5]  B = input f32[5, 7]", "matmul(A, B)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{3, 7}));
  EXPECT_EQ(body_of(k, "Y"), "sum(k:5, A[i0, k] * B[k, i1])");
  EXPECT_EQ(op_names(k), (Names{"A", "B", "Y"}));
}

TEST(BuiltinTest, BatchMatmul) {
  Kernel k = expand("A = input f32[2, 3, 5]  B = input f32[2, 5, 7]", "batch_matmul(A, B)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 3, 7}));
  EXPECT_EQ(body_of(k, "Y"), "sum(k:5, A[i0, i1, k] * B[i0, k, i2])");
}

TEST(BuiltinTest, DenseTransposesTheWeight) {
  Kernel k = expand("X = input f32[3, 5]  W = const f32[7, 5]", "dense(X, W)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{3, 7}));
  EXPECT_EQ(body_of(k, "Y"), "sum(k:5, X[i0, k] * W[i1, k])");
}

TEST(BuiltinTest, IntegerMatmulKeepsTheDtype) {
  Kernel k = expand("A = input i8[2, 2]  B = input i8[2, 2]", "matmul(A, B)");
  EXPECT_EQ(op_named(k, "Y").dtype, DType::I8);
}

// ---- Convolutions --------------------------------------------------------------------------------

TEST(BuiltinTest, Conv1d) {
  // L = (32 + 2 * 1 - 2 * (3 - 1) - 1) / 2 + 1 = 15
  EXPECT_EQ(shape_of("X = input f32[1, 4, 32]  W = const f32[8, 4, 3]", "conv1d_ncw(X, W, stride = 2, pad = 1, dilation = 2)"),
            (Shape{1, 8, 15}));
}

TEST(BuiltinTest, Conv2dNchwDefaults) {
  Kernel k = expand("X = input f32[2, 3, 8, 8]  W = const f32[4, 3, 3, 3]", "conv2d_nchw(X, W)");
  EXPECT_EQ(op_names(k), (Names{"X", "W", "Y"}));  // no padding: no pad operation
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 4, 6, 6}));
  EXPECT_EQ(body_of(k, "Y"), "sum(rc:3, ry:3, rx:3, X[i0, rc, i2 + ry, i3 + rx] * W[i1, rc, ry, rx])");
}

TEST(BuiltinTest, Conv2dNchwStridePadDilation) {
  Kernel k =
      expand("X = input f32[1, 3, 16, 16]  W = const f32[8, 3, 3, 3]", "conv2d_nchw(X, W, stride = 2, pad = 1, dilation = 2)");
  // (16 + 2 - 5) / 2 + 1 = 7
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 8, 7, 7}));
  EXPECT_EQ(op_named(k, "Y.pad").shape, (Shape{1, 3, 18, 18}));
  // The batch axis has extent 1, so its index simplifies to 0.
  EXPECT_EQ(body_of(k, "Y.pad"), "select(i2 >= 1 && i2 < 17 && i3 >= 1 && i3 < 17, X[0, i1, i2 - 1, i3 - 1], 0.0)");
  EXPECT_EQ(body_of(k, "Y"), "sum(rc:3, ry:3, rx:3, Y.pad[0, rc, i2 * 2 + ry * 2, i3 * 2 + rx * 2] * W[i1, rc, ry, rx])");
}

TEST(BuiltinTest, Conv2dNchwPerDimensionAndAsymmetricPadding) {
  // pad = [top, left, bottom, right]: H pads 0 + 2, W pads 1 + 3.
  EXPECT_EQ(shape_of("X = input f32[1, 2, 16, 16]  W = const f32[4, 2, 3, 3]",
                     "conv2d_nchw(X, W, stride = [2, 1], pad = [0, 1, 2, 3])"),
            (Shape{1, 4, 8, 18}));
  EXPECT_EQ(
      shape_of("X = input f32[1, 2, 16, 16]  W = const f32[4, 2, 3, 1]", "conv2d_nchw(X, W, pad = [1, 0], dilation = [2, 1])"),
      (Shape{1, 4, 14, 16}));
}

TEST(BuiltinTest, Conv2dNchwGroups) {
  Kernel k = expand("X = input f32[1, 8, 6, 6]  W = const f32[16, 4, 3, 3]", "conv2d_nchw(X, W, groups = 2, pad = 1)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 16, 6, 6}));
  // Output channel q reads input channels (q / 8) * 4 + rc.
  EXPECT_EQ(body_of(k, "Y"), "sum(rc:4, ry:3, rx:3, Y.pad[0, i1 / 8 * 4 + rc, i2 + ry, i3 + rx] * W[i1, rc, ry, rx])");
}

TEST(BuiltinTest, Conv2dNhwc) {
  EXPECT_EQ(shape_of("X = input f32[1, 7, 7, 4]  W = const f32[3, 3, 4, 8]", "conv2d_nhwc(X, W, pad = 1)"), (Shape{1, 7, 7, 8}));
  EXPECT_EQ(shape_of("X = input f32[1, 7, 7, 4]  W = const f32[3, 3, 2, 8]", "conv2d_nhwc(X, W, stride = 2, groups = 2)"),
            (Shape{1, 3, 3, 8}));
}

TEST(BuiltinTest, DepthwiseConv2d) {
  EXPECT_EQ(shape_of("X = input f32[1, 4, 9, 9]  W = const f32[4, 1, 3, 3]", "depthwise_conv2d_nchw(X, W, stride = 2)"),
            (Shape{1, 4, 4, 4}));
  // A channel multiplier of 2 doubles the output channels.
  Kernel k = expand("X = input f32[1, 4, 9, 9]  W = const f32[4, 2, 3, 3]", "depthwise_conv2d_nchw(X, W, pad = 1)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 8, 9, 9}));
}

TEST(BuiltinTest, Conv2dTranspose) {
  // (4 - 1) * 2 - 2 * 1 + 3 + 1 = 8
  Kernel k = expand("X = input f32[1, 16, 4, 4]  W = const f32[16, 8, 3, 3]",
                    "conv2d_transpose_nchw(X, W, stride = 2, pad = 1, output_pad = 1)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 8, 8, 8}));
  // By output phase, without a dilated input: the input padded by one on each side for the taps
  // yq + u / 2 - q (q < 2), the 3x3 window padded to 4x4 so that both phases have two taps, and
  // the phases [N, K, 8 / 2, 2, 8 / 2, 2] read back as the output.
  EXPECT_EQ(op_names(k), (Names{"X", "W", "Y.pad", "Y.window_pad", "Y.phases", "Y"}));
  EXPECT_EQ(op_named(k, "Y.pad").shape, (Shape{1, 16, 6, 6}));
  EXPECT_EQ(op_named(k, "Y.window_pad").shape, (Shape{16, 8, 4, 4}));
  EXPECT_EQ(op_named(k, "Y.phases").shape, (Shape{1, 8, 4, 2, 4, 2}));
  // Defaults: stride 1, no padding: out = in + window - 1.
  EXPECT_EQ(shape_of("X = input f32[1, 2, 5, 6]  W = const f32[2, 3, 3, 2]", "conv2d_transpose_nchw(X, W)"), (Shape{1, 3, 7, 7}));
}

TEST(BuiltinTest, Conv3d) {
  EXPECT_EQ(shape_of("X = input f32[1, 4, 6, 7, 8]  W = const f32[8, 4, 3, 3, 3]", "conv3d_ncdhw(X, W)"), (Shape{1, 8, 4, 5, 6}));
  EXPECT_EQ(
      shape_of("X = input f32[1, 4, 6, 7, 8]  W = const f32[8, 4, 3, 3, 3]", "conv3d_ncdhw(X, W, stride = [1, 2, 3], pad = 1)"),
      (Shape{1, 8, 6, 4, 3}));
}

// ---- Pooling -------------------------------------------------------------------------------------

TEST(BuiltinTest, MaxPoolPadsWithMinusInfinity) {
  Kernel k = expand("X = input f32[1, 4, 9, 9]", "max_pool2d(X, size = 3, stride = 2, pad = 1)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 4, 5, 5}));
  EXPECT_EQ(body_of(k, "Y.pad"), "select(i2 >= 1 && i2 < 10 && i3 >= 1 && i3 < 10, X[0, i1, i2 - 1, i3 - 1], -inf)");
  EXPECT_EQ(body_of(k, "Y"), "max(ry:3, rx:3, Y.pad[0, i1, i2 * 2 + ry, i3 * 2 + rx])");
  Kernel i = expand("X = input i8[1, 1, 4, 4]", "max_pool2d(X, size = 2, pad = 1)");
  EXPECT_THAT(body_of(i, "Y.pad"), ::testing::EndsWith(", -128)"));
}

TEST(BuiltinTest, AvgPoolDividesByTheInBoundsCount) {
  Kernel k = expand("X = input f32[1, 4, 9, 9]", "avg_pool2d(X, size = [2, 3], stride = [2, 1])");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 4, 4, 7}));
  EXPECT_EQ(op_names(k), (Names{"X", "Y.sum", "Y"}));
  Kernel p = expand("X = input f32[1, 1, 4, 4]", "avg_pool2d(X, size = 3, pad = 1)");
  EXPECT_EQ(op_named(p, "Y").shape, (Shape{1, 1, 4, 4}));
  // The window of output row y covers input rows y - 1 .. y + 1, clipped to [0, 4).
  EXPECT_EQ(body_of(p, "Y"), "Y.sum[0, 0, i2, i3] / f32((min(i2 + 2, 4) - max(i2 - 1, 0)) * (min(i3 + 2, 4) - max(i3 - 1, 0)))");
}

// ---- Normalisation -------------------------------------------------------------------------------

TEST(BuiltinTest, SoftmaxOverAnyAxisOfAnyRank) {
  Kernel k = expand("X = input f32[2, 3, 4]", "softmax(X, axis = 1)");
  EXPECT_EQ(op_names(k), (Names{"X", "Y.max", "Y.exp", "Y.sum", "Y"}));
  EXPECT_EQ(op_named(k, "Y.max").shape, (Shape{2, 1, 4}));
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 3, 4}));
  EXPECT_EQ(body_of(k, "Y"), "Y.exp[i0, i1, i2] / Y.sum[i0, 0, i2]");
  EXPECT_EQ(op_named(expand("X = input f32[5]", "softmax(X)"), "Y.sum").shape, (Shape{1}));
  EXPECT_EQ(op_named(expand("X = input f64[2, 3, 4]", "softmax(X, axis = -3)"), "Y.max").shape, (Shape{1, 3, 4}));
}

TEST(BuiltinTest, LayerNorm) {
  Kernel k = expand("X = input f32[2, 4, 12]  g = const f32[12]  b = const f32[12]", "layer_norm(X, g, b)");
  EXPECT_EQ(op_names(k), (Names{"X", "g", "b", "Y.sum", "Y.sqsum", "Y"}));
  EXPECT_EQ(op_named(k, "Y.sum").shape, (Shape{2, 4, 1}));
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 4, 12}));
  EXPECT_THAT(body_of(k, "Y"), ::testing::HasSubstr("1e-05"));
  // Over the last two dimensions, with gamma and beta of their shape.
  Kernel two =
      expand("X = input f32[2, 4, 12]  g = const f32[4, 12]  b = const f32[4, 12]", "layer_norm(X, g, b, axis = 1, eps = 0.001)");
  EXPECT_EQ(op_named(two, "Y.sum").shape, (Shape{2, 1, 1}));
  EXPECT_THAT(body_of(two, "Y"), ::testing::HasSubstr("0.001"));
}

TEST(BuiltinTest, BatchNorm) {
  Kernel k = expand("X = input f32[2, 4, 5, 5]  m = const f32[4]  v = const f32[4]  g = const f32[4]  b = const f32[4]",
                    "batch_norm(X, m, v, g, b)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 4, 5, 5}));
  EXPECT_EQ(body_of(k, "Y"), "(X[i0, i1, i2, i3] - m[i1]) * rsqrt(v[i1] + 1e-05) * g[i1] + b[i1]");
  Kernel last =
      expand("X = input f32[3, 6]  m = const f32[6]  v = const f32[6]", "batch_norm(X, m, v, m, v, axis = -1, eps = 2)");
  EXPECT_EQ(body_of(last, "Y"), "(X[i0, i1] - m[i1]) * rsqrt(v[i1] + 2.0) * m[i1] + v[i1]");
}

// ---- Elementwise ---------------------------------------------------------------------------------

TEST(BuiltinTest, BiasAddAlongAnAxis) {
  Kernel k = expand("X = input f32[2, 3, 4]  b = const f32[3]", "bias_add(X, b)");
  EXPECT_EQ(body_of(k, "Y"), "X[i0, i1, i2] + b[i1]");
  Kernel last = expand("X = input f32[2, 3, 4]  b = const f32[4]", "bias_add(X, b, axis = -1)");
  EXPECT_EQ(body_of(last, "Y"), "X[i0, i1, i2] + b[i2]");
}

TEST(BuiltinTest, ElementwiseMathFunctions) {
  for (const char* fn : {"relu", "sigmoid", "tanh", "exp", "gelu", "log", "sqrt", "rsqrt", "erf", "abs", "floor", "ceil"}) {
    Kernel k = expand("X = input f32[2, 3]", std::string(fn) + "(X)");
    EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 3})) << fn;
    EXPECT_EQ(body_of(k, "Y"), std::string(fn) + "(X[i0, i1])");
  }
  EXPECT_EQ(body_of(expand("X = input f32[2]", "pow(X, 2.0)"), "Y"), "pow(X[i0], 2.0)");
  EXPECT_EQ(op_named(expand("X = input i32[2]", "relu(X)"), "Y").dtype, DType::I32);
}

TEST(BuiltinTest, ElementwiseCastsAndSelect) {
  Kernel k = expand("X = input f32[2]  M = input bool[2]", "select(M, f16(X), f16(0.0 - X))");
  EXPECT_EQ(op_named(k, "Y").dtype, DType::F16);
  EXPECT_EQ(op_names(k), (Names{"X", "M", "Y.f16", "Y.sub", "Y.f16.1", "Y"}));
  EXPECT_EQ(body_of(k, "Y"), "select(M[i0], Y.f16[i0], Y.f16.1[i0])");
}

TEST(BuiltinTest, BroadcastingFollowsNumpy) {
  Kernel k = expand("A = input f32[4, 1, 3]  B = input f32[5, 3]", "A + B");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{4, 5, 3}));
  EXPECT_EQ(body_of(k, "Y"), "A[i0, 0, i2] + B[i1, i2]");
  EXPECT_EQ(shape_of("A = input f32[4, 1]  B = input f32[1, 6]", "A * B"), (Shape{4, 6}));
  EXPECT_EQ(shape_of("A = input f32[3]  B = input f32[2, 1, 3]", "A - B"), (Shape{2, 1, 3}));
  EXPECT_EQ(shape_of("A = input f32[1]  B = input f32[2, 5]", "A / B"), (Shape{2, 5}));
}

TEST(BuiltinTest, MaxAndMinBroadcastAndTakeScalars) {
  Kernel k = expand("A = input f32[4, 1]  B = input f32[3]", "max(A, B)");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{4, 3}));
  EXPECT_EQ(body_of(k, "Y"), "max(A[i0, 0], B[i1])");
  EXPECT_EQ(body_of(expand("A = input f32[4]", "min(A, 6.0)"), "Y"), "min(A[i0], 6.0)");
  EXPECT_EQ(body_of(expand("A = input f32[4]", "2.0 * A - 1"), "Y"), "Y.mul[i0] - 1.0");
}

// ---- Layout --------------------------------------------------------------------------------------

TEST(BuiltinTest, TransposeWithPermutation) {
  Kernel k = expand("X = input f32[2, 3, 4]", "transpose(X, perm = [2, 0, 1])");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{4, 2, 3}));
  EXPECT_EQ(body_of(k, "Y"), "X[i1, i2, i0]");
  EXPECT_EQ(shape_of("X = input f32[2, 3, 4]", "transpose(X)"), (Shape{4, 3, 2}));
}

TEST(BuiltinTest, ReshapeInfersMinusOne) {
  Kernel k = expand("X = input f32[2, 3, 4]", "reshape(X, shape = [4, -1])");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{4, 6}));
  // Row-major order: element (i0, i1) is flat element 6 * i0 + i1 of X.
  EXPECT_EQ(body_of(k, "Y"), "X[(i0 * 6 + i1) / 12, (i0 + (i0 * 2 + i1) / 4) % 3, (i0 * 2 + i1) % 4]");
  EXPECT_EQ(shape_of("X = input f32[2, 3, 4]", "reshape(X, shape = [-1])"), (Shape{24}));
  EXPECT_EQ(shape_of("X = input f32[2, 3, 4]", "reshape(X, shape = [2, 12])"), (Shape{2, 12}));
  EXPECT_EQ(body_of(expand("X = input f32[2, 3]", "reshape(X, shape = [2, 3, 1])"), "Y"), "X[i0, i1]");
}

// ---- Composition ---------------------------------------------------------------------------------

TEST(BuiltinTest, NestedBuiltinsBecomeAChainOfOperations) {
  Kernel k = expand("X = input f32[1, 4, 8, 8]  W = const f32[4, 4, 3, 3]  b = const f32[4]",
                    "relu(bias_add(conv2d_nchw(X, W, stride = 1, pad = 1), b, axis = 1))");
  EXPECT_EQ(op_names(k), (Names{"X", "W", "b", "Y.pad", "Y.conv2d", "Y.bias_add", "Y"}));
  EXPECT_EQ(names_of(k, k.dag.outputs()), (Names{"Y"}));
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{1, 4, 8, 8}));
}

// ---- Argument errors -----------------------------------------------------------------------------

const char* kDecls =
    "A = input f32[3, 4]  B = input f32[4, 5]  C = input f32[2, 3, 4]  I = input i32[3, 4]  Q = input bool[3, 4]\n"
    "X = input f32[1, 4, 8, 8]  W = const f32[8, 4, 3, 3]  D = input f64[4, 5]";

// The call is on line 4; a macro so that a failure names the line of the check.
#define EXPECT_REJECTS(call, column, message) EXPECT_TRUE(fails_at(program(kDecls, call), 4, column, message))

TEST(BuiltinErrorTest, WrongNumberOfTensors) {
  EXPECT_REJECTS("matmul(A)", 5, "'matmul' takes 2 tensor arguments, given 1");
  EXPECT_REJECTS("softmax(A, B)", 5, "'softmax' takes 1 tensor argument, given 2");
  EXPECT_REJECTS("batch_norm(A, B)", 5, "'batch_norm' takes 5 tensor arguments, given 2");
  EXPECT_REJECTS("relu(A, B)", 5, "'relu' takes 1 argument, given 2");
  EXPECT_REJECTS("pow(A)", 5, "'pow' takes 2 arguments, given 1");
  EXPECT_REJECTS("select(A, B)", 5, "'select' takes 3 arguments, given 2");
  EXPECT_REJECTS("transpose()", 5, "'transpose' takes 1 tensor argument, given 0");
}

TEST(BuiltinErrorTest, ScalarWhereATensorIsNeeded) {
  EXPECT_REJECTS("matmul(A, 2.0)", 15, "argument of 'matmul' must be a tensor");
  EXPECT_REJECTS("relu(2.0)", 5, "'relu' in tensor form needs a tensor operand");
}

TEST(BuiltinErrorTest, RankMismatch) {
  EXPECT_REJECTS("matmul(C, B)", 12, "shape mismatch in 'matmul': 'C' must have rank 2 ([M, K]), but its shape is [2, 3, 4]");
  EXPECT_REJECTS("batch_matmul(C, A)", 21, "'A' must have rank 3 ([batch, K, N]), but its shape is [3, 4]");
  EXPECT_REJECTS("conv2d_nchw(A, W)", 17, "shape mismatch in 'conv2d_nchw': 'A' must have rank 4 ([N, C, H, W])");
  EXPECT_REJECTS("conv2d_nchw(X, A)", 20, "'A' must have rank 4 ([K, C/groups, R, S])");
  EXPECT_REJECTS("max_pool2d(C, size = 2)", 16, "'C' must have rank 4 ([N, C, H, W])");
}

TEST(BuiltinErrorTest, ShapeMismatch) {
  EXPECT_REJECTS("matmul(A, A)", 5, "shape mismatch in 'matmul': K is 4 in 'A' [3, 4] but 3 in 'A' [3, 4]");
  EXPECT_REJECTS("dense(A, B)", 5, "shape mismatch in 'dense': K is 4 in 'A' [3, 4] but 5 in 'B' [4, 5]");
  EXPECT_REJECTS("A + B", 9, "shape mismatch in 'add': [4, 5] of 'B' cannot be broadcast with [3, 4]");
  EXPECT_REJECTS("max(C, B)", 12, "shape mismatch in 'max': [4, 5] of 'B' cannot be broadcast with [2, 3, 4]");
  EXPECT_REJECTS("bias_add(A, A)", 17,
                 "shape mismatch in 'bias_add': the bias must have shape [4] (dimension 1 of 'A'), but its shape is [3, 4]");
  EXPECT_REJECTS("layer_norm(C, A, A)", 19, "shape mismatch in 'layer_norm': 'A' must have shape [4], but its shape is [3, 4]");
  EXPECT_REJECTS("batch_norm(X, A, A, A, A)", 19,
                 "shape mismatch in 'batch_norm': 'A' must have shape [4], but its shape is [3, 4]");
}

TEST(BuiltinErrorTest, ConvolutionShapeMismatch) {
  EXPECT_REJECTS("conv2d_nchw(X, W, groups = 3)", 5, "4 input and 8 output channels are not divisible by groups = 3");
  EXPECT_REJECTS("conv2d_nchw(X, W, groups = 2)", 20, "the weight has 4 input channels but the input has 4 (over 2 groups)");
  EXPECT_REJECTS("depthwise_conv2d_nchw(X, W)", 30,
                 "shape mismatch in 'depthwise_conv2d_nchw': the weight has 8 channels but the input has 4");
  EXPECT_REJECTS("conv2d_transpose_nchw(X, W)", 30, "the weight has 8 input channels but the input has 4");
  EXPECT_REJECTS("conv2d_nchw(X, W, dilation = 4)", 5, "a window of 3 with dilation 4 does not fit an input of 8 with padding 0");
  EXPECT_REJECTS("conv2d_nchw(X, W, pad = 1, dilation = 5)", 5,
                 "a window of 3 with dilation 5 does not fit an input of 8 with padding 2");
}

TEST(BuiltinErrorTest, DtypeMismatch) {
  EXPECT_REJECTS("matmul(A, D)", 15, "dtype mismatch in 'matmul': 'A' is f32 but 'D' is f64");
  EXPECT_REJECTS("matmul(Q, Q)", 12, "'matmul' needs numbers, but 'Q' is bool");
  EXPECT_REJECTS("softmax(I)", 13, "'softmax' needs a floating-point tensor, but 'I' is i32");
  EXPECT_REJECTS("A + I", 7, "operands of '+' have different dtypes, f32 and i32");
}

TEST(BuiltinErrorTest, UnknownKeyword) {
  EXPECT_REJECTS("conv2d_nchw(X, W, padding = 1)", 23,
                 "unknown argument 'padding' of 'conv2d_nchw' (expected stride, pad, dilation, groups)");
  EXPECT_REJECTS("relu(A, axis = 1)", 13, "unknown argument 'axis' of 'relu' (it takes none)");
  EXPECT_REJECTS("matmul(A, B, transpose = 1)", 18, "unknown argument 'transpose' of 'matmul' (it takes none)");
  EXPECT_REJECTS("conv1d_ncw(C, C, groups = 2)", 22,
                 "unknown argument 'groups' of 'conv1d_ncw' (expected stride, pad, dilation)");
}

TEST(BuiltinErrorTest, KeywordGivenTwice) { EXPECT_REJECTS("softmax(A, axis = 0, axis = 1)", 26, "argument 'axis' given twice"); }

TEST(BuiltinErrorTest, KeywordOfTheWrongKind) {
  EXPECT_REJECTS("conv2d_nchw(X, W, groups = [1, 1])", 23, "argument 'groups' must be a single integer");
  EXPECT_REJECTS("conv2d_nchw(X, W, groups = 1.0)", 32, "argument 'groups' must be an integer");
  EXPECT_REJECTS("conv2d_nchw(X, W, stride = 1.5)", 32, "argument 'stride' must hold integers");
  EXPECT_REJECTS("transpose(A, perm = [1, 0.0])", 29, "argument 'perm' must hold integers");
  EXPECT_REJECTS("layer_norm(A, A, A, eps = [1])", 25, "argument 'eps' must be a single number");
  EXPECT_REJECTS("softmax(A, axis = A)", 23, "an argument value must be an integer expression of literals and 'let' constants");
}

TEST(BuiltinErrorTest, BadWindowValues) {
  EXPECT_REJECTS("conv2d_nchw(X, W, stride = 0)", 5, "'stride' of 'conv2d_nchw' must be at least 1, given 0");
  EXPECT_REJECTS("conv2d_nchw(X, W, pad = [1, -1])", 5, "'pad' of 'conv2d_nchw' must be at least 0, given -1");
  EXPECT_REJECTS("conv2d_nchw(X, W, dilation = 0)", 5, "'dilation' of 'conv2d_nchw' must be at least 1, given 0");
  EXPECT_REJECTS("conv2d_nchw(X, W, groups = 0)", 5, "'groups' of 'conv2d_nchw' must be at least 1, given 0");
  EXPECT_REJECTS("conv2d_nchw(X, W, pad = [1, 2, 3])", 23,
                 "argument 'pad' of 'conv2d_nchw' needs 1 or 2 values (or 4 as before..., after...), given 3");
  EXPECT_REJECTS("conv2d_nchw(X, W, stride = [1, 1, 1, 1])", 23,
                 "argument 'stride' of 'conv2d_nchw' needs 1 or 2 values, given 4");
}

TEST(BuiltinErrorTest, TransposedConvolutionValues) {
  EXPECT_TRUE(fails_at(
      program("X = input f32[1, 2, 4, 4]  W = const f32[2, 3, 3, 3]", "conv2d_transpose_nchw(X, W, stride = 2, output_pad = 2)"),
      3, 5, "'output_pad' of 'conv2d_transpose_nchw' must be smaller than the stride, given 2 with stride 2"));
  EXPECT_TRUE(fails_at(program("X = input f32[1, 2, 1, 1]  W = const f32[2, 3, 1, 1]", "conv2d_transpose_nchw(X, W, pad = 1)"), 3,
                       5, "shape mismatch in 'conv2d_transpose_nchw': the output would be empty"));
  EXPECT_TRUE(
      fails_at(program("X = input f32[1, 2, 4, 4]  W = const f32[2, 3, 3, 3]", "conv2d_transpose_nchw(X, W, output_pad = -1)"), 3,
               5, "'output_pad' of 'conv2d_transpose_nchw' must be at least 0, given -1"));
}

TEST(BuiltinErrorTest, PoolingValues) {
  EXPECT_REJECTS("max_pool2d(X, stride = 2)", 5, "'max_pool2d' needs the window size (size = ...)");
  EXPECT_REJECTS("avg_pool2d(X, size = 2, pad = 2)", 5,
                 "'pad' of 'avg_pool2d' must be smaller than the window, given 2 with size 2");
  EXPECT_REJECTS("max_pool2d(X, size = 9)", 5,
                 "shape mismatch in 'max_pool2d': a window of 9 with dilation 1 does not fit an input of 8");
  EXPECT_REJECTS("max_pool2d(X, size = 0)", 5, "'size' of 'max_pool2d' must be at least 1, given 0");
  EXPECT_TRUE(
      fails_at(program("X = input bool[1, 1, 4, 4]", "max_pool2d(X, size = 2)"), 3, 5, "'max_pool2d' needs numbers, not bool"));
  EXPECT_TRUE(fails_at(program("X = input i32[1, 1, 4, 4]", "avg_pool2d(X, size = 2)"), 3, 16,
                       "'avg_pool2d' needs a floating-point tensor, but 'X' is i32"));
}

TEST(BuiltinErrorTest, AxisOutOfRange) {
  EXPECT_REJECTS("softmax(A, axis = 2)", 16, "axis 2 is out of range for rank 2");
  EXPECT_REJECTS("layer_norm(C, A, A, axis = -4)", 25, "axis -4 is out of range for rank 3");
  EXPECT_TRUE(
      fails_at(program("V = input f32[4]  b = input f32[4]", "bias_add(V, b)"), 3, 5, "axis 1 is out of range for rank 1"));
}

TEST(BuiltinErrorTest, BadPermutation) {
  EXPECT_REJECTS("transpose(C, perm = [0, 0, 1])", 5, "'perm' of 'transpose' must be a permutation of 0..2 for 'C' of rank 3");
  EXPECT_REJECTS("transpose(C, perm = [1, 0])", 5, "must be a permutation of 0..2");
  EXPECT_REJECTS("transpose(C, perm = [0, 1, 3])", 5, "must be a permutation of 0..2");
}

TEST(BuiltinErrorTest, BadReshape) {
  EXPECT_REJECTS("reshape(C)", 5, "'reshape' needs the new shape (shape = [...])");
  EXPECT_REJECTS("reshape(C, shape = [0, 24])", 5,
                 "'shape' of 'reshape' must hold positive extents and at most one -1, given [0, 24]");
  EXPECT_REJECTS("reshape(C, shape = [-1, -1])", 5, "at most one -1, given [-1, -1]");
  EXPECT_REJECTS("reshape(C, shape = [5, -1])", 5, "shape mismatch in 'reshape': 24 elements cannot be reshaped to [5, -1]");
  EXPECT_REJECTS("reshape(C, shape = [5, 5])", 5, "shape mismatch in 'reshape': 'C' has 24 elements, the shape [5, 5] has 25");
}

// Regression (found with the sanitizer build of the fuzz target): huge integer arguments
// overflowed the shape arithmetic of the built-ins (padding, windows, strides, reshape)
// instead of being rejected.
TEST(BuiltinErrorTest, IntegerArgumentsAreBoundedLikeExtents) {
  EXPECT_REJECTS("conv2d_nchw(X, W, pad = 4611686018427387904)", 29,
                 "argument 'pad' of 'conv2d_nchw' is out of range: 4611686018427387904 (at most 2^40 in magnitude)");
  EXPECT_REJECTS("max_pool2d(X, size = 4611686018427387904, pad = 4611686018427387903)", 26,
                 "argument 'size' of 'max_pool2d' is out of range");
  EXPECT_REJECTS("conv2d_transpose_nchw(X, X, stride = [1, 4611686018427387904])", 46,
                 "argument 'stride' of 'conv2d_transpose_nchw' is out of range");
  EXPECT_REJECTS("reshape(C, shape = [4611686018427387904, 4611686018427387904, -1])", 25,
                 "argument 'shape' of 'reshape' is out of range");
  // A value computed by an expression is located at its operator.
  EXPECT_REJECTS("softmax(A, axis = -9223372036854775807 - 1)", 44, "argument 'axis' of 'softmax' is out of range");
}

TEST(BuiltinErrorTest, WindowsWiderThanInt64AreRejected) {
  EXPECT_REJECTS("conv2d_nchw(X, W, dilation = 1099511627776)", 5,
                 "a window of 3 with dilation 1099511627776 does not fit an input of 8 with padding 0");
  EXPECT_TRUE(fails_at(
      program("X = input f32[1, 1, 4, 4]  W = const f32[1, 1, 1099511627776, 1]", "conv2d_nchw(X, W, dilation = 1099511627776)"),
      3, 5, "a window of 1099511627776 with dilation 1099511627776 does not fit"));
}

TEST(BuiltinErrorTest, ResultsLargerThanTheTensorLimitAreRejected) {
  EXPECT_REJECTS("conv2d_nchw(X, W, pad = 1000000)", 5,
                 "'conv2d_nchw' would make a tensor of shape [1, 4, 2000008, 2000008], more than 2^40 elements");
  EXPECT_TRUE(fails_at(program("P = input f32[1099511627776, 1]  R = input f32[1, 1099511627776]", "P + R"), 3, 7,
                       "'add' would make a tensor of shape [1099511627776, 1099511627776], more than 2^40 elements"));
  EXPECT_TRUE(fails_at(
      program("X = input f32[1, 1, 1048576, 2]  W = const f32[1, 1, 1, 1]", "conv2d_transpose_nchw(X, W, stride = 2000000)"), 3,
      5, "'conv2d_transpose_nchw' would make a tensor with more than 2^40 elements (stride 2000000)"));
  EXPECT_TRUE(fails_at(
      program("X = input f32[1, 1, 1048576, 2]  W = const f32[1, 1, 1, 1]", "conv2d_transpose_nchw(X, W, stride = 1048577)"), 3,
      5, "'conv2d_transpose_nchw' would make a tensor of shape [1, 1, 1099511627776, 1048578], more than 2^40 elements"));
  EXPECT_REJECTS(
      "reshape(C, shape = [1099511627776, 1099511627776, -1])", 5,
      "shape mismatch in 'reshape': 'C' has 24 elements, the shape [1099511627776, 1099511627776, -1] has more than 2^40");
}

}  // namespace
}  // namespace ansor
