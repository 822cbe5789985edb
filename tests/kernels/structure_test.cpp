// Tests of the library as a whole and of kernel structure: the generic kernel table lists every
// kernel of kernels.def with its arguments (names, dtypes, shapes, input / const / output), an
// intermediate read by two outputs, an unused input, and concurrent calls.
#include "reference.h"

#include <cstring>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

namespace kernel_tests {
namespace {

const char* dtype_name(ansor_dtype dtype) {
  switch (dtype) {
    case ANSOR_DTYPE_F32: return "f32";
    case ANSOR_DTYPE_F64: return "f64";
    case ANSOR_DTYPE_F16: return "f16";
    case ANSOR_DTYPE_BF16: return "bf16";
    case ANSOR_DTYPE_I8: return "i8";
    case ANSOR_DTYPE_I16: return "i16";
    case ANSOR_DTYPE_I32: return "i32";
    case ANSOR_DTYPE_I64: return "i64";
    case ANSOR_DTYPE_U8: return "u8";
    case ANSOR_DTYPE_BOOL: return "bool";
  }
  return "?";
}

// "name(input, const weight, ...) -> output, ..." with each argument as "name dtype[shape]".
std::string signature(const ansor_kernel_info& kernel) {
  std::ostringstream inputs, outputs;
  for (int i = 0; i < kernel.num_args; ++i) {
    const ansor_tensor_info& arg = kernel.args[i];
    std::ostringstream& out = arg.is_output ? outputs : inputs;
    if (out.tellp() > 0) out << ", ";
    if (arg.is_const) out << "const ";
    out << arg.name << " " << dtype_name(arg.dtype) << "[";
    for (int d = 0; d < arg.rank; ++d) out << (d ? ", " : "") << arg.shape[d];
    out << "]";
  }
  return std::string(kernel.name) + "(" + inputs.str() + ") -> " + outputs.str();
}

// Every kernel of kernels.def in definition order, as written there.
const char* const kExpectedSignatures[] = {
    "matmul(A f32[13, 17], B f32[17, 11]) -> C f32[13, 11]",
    "batch_matmul(A f32[3, 5, 7], B f32[3, 7, 6]) -> C f32[3, 5, 6]",
    "dense_bias_relu(X f32[6, 20], const W f32[9, 20], const b f32[9]) -> Y f32[6, 9]",
    "conv1d(X f32[2, 3, 20], const W f32[4, 3, 3]) -> Y f32[2, 4, 9]",
    "conv2d_stride2(X f32[1, 3, 9, 9], const W f32[4, 3, 3, 3]) -> Y f32[1, 4, 5, 5]",
    "conv2d_dilation2(X f32[2, 2, 10, 9], const W f32[3, 2, 3, 3]) -> Y f32[2, 3, 9, 7]",
    "conv2d_groups2_bias_relu(X f32[1, 4, 7, 7], const W f32[6, 2, 3, 3], const b f32[6]) -> Y f32[1, 6, 7, 7]",
    "conv2d_nhwc(X f32[1, 8, 7, 3], const W f32[3, 3, 3, 5]) -> Y f32[1, 4, 7, 5]",
    "conv2d_nhwc_groups2(X f32[2, 6, 6, 4], const W f32[3, 3, 2, 6]) -> Y f32[2, 6, 6, 6]",
    "depthwise_stride2(X f32[1, 3, 8, 8], const W f32[3, 1, 3, 3]) -> Y f32[1, 3, 4, 4]",
    "depthwise_multiplier2(X f32[1, 3, 7, 7], const W f32[3, 2, 3, 3]) -> Y f32[1, 6, 7, 7]",
    "conv2d_transpose(X f32[1, 3, 5, 4], const W f32[3, 2, 3, 3]) -> Y f32[1, 2, 10, 8]",
    "conv2d_transpose_uneven(X f32[2, 2, 4, 5], const W f32[2, 3, 4, 3]) -> Y f32[2, 3, 11, 12]",
    "conv3d(X f32[1, 2, 5, 6, 6], const W f32[3, 2, 3, 3, 3]) -> Y f32[1, 3, 5, 3, 3]",
    "max_pool(X f32[1, 3, 9, 9]) -> Y f32[1, 3, 5, 5]",
    "avg_pool(X f32[1, 3, 9, 9]) -> Y f32[1, 3, 5, 5]",
    "avg_pool_asymmetric(X f32[2, 2, 6, 7]) -> Y f32[2, 2, 6, 7]",
    "max_pool_i8(X i8[1, 2, 5, 5]) -> Y i8[1, 2, 3, 3]",
    "softmax_axis0(X f32[4, 5, 6]) -> Y f32[4, 5, 6]",
    "softmax_last(X f32[4, 5, 6]) -> Y f32[4, 5, 6]",
    "layer_norm_last(X f32[6, 16], const gamma f32[16], const beta f32[16]) -> Y f32[6, 16]",
    "softmax_long_rows(X f32[3, 300]) -> Y f32[3, 300]",
    "layer_norm_long_rows(X f32[2, 256], const gamma f32[256], const beta f32[256]) -> Y f32[2, 256]",
    "layer_norm_axis_m2(X f32[3, 4, 8], const gamma f32[4, 8], const beta f32[4, 8]) -> Y f32[3, 4, 8]",
    "batch_norm(X f32[2, 4, 3, 3], const mean f32[4], const var f32[4], const gamma f32[4], const beta f32[4]) -> Y f32[2, 4, 3, 3]",
    "bias_add_axis2(X f32[2, 3, 4, 5], const b f32[4]) -> Y f32[2, 3, 4, 5]",
    "activations(X f32[7, 9]) -> Relu f32[7, 9], Sigmoid f32[7, 9], Tanh f32[7, 9], Exp f32[7, 9], Gelu f32[7, 9]",
    "broadcast_arithmetic(A f32[3, 1, 5], B f32[4, 1]) -> Sum f32[3, 4, 5], Difference f32[3, 4, 5], Product f32[3, 4, 5], "
    "Quotient f32[3, 4, 5]",
    "max_min_tensors(A f32[4, 5], B f32[5]) -> Max f32[4, 5], Min f32[4, 5]",
    "tensor_scalar(X f32[5, 6]) -> Affine f32[5, 6], Reversed f32[5, 6], Clamped f32[5, 6]",
    "transpose_reverse(X f32[2, 3, 4]) -> Y f32[4, 3, 2]",
    "transpose_perm(X f32[2, 3, 4, 5]) -> Y f32[2, 4, 5, 3]",
    "reshape_inferred(X f32[4, 6, 5]) -> Y f32[5, 6, 4]",
    "matmul_by_hand(A f32[12, 15], B f32[15, 10]) -> C f32[12, 10]",
    "conv_select_padding(X f32[1, 3, 6, 6], const W f32[4, 3, 3, 3], const b f32[4]) -> R f32[1, 4, 6, 6]",
    "max_min_prod_reductions(X f32[5, 7]) -> Largest f32[5], Smallest f32[5], Product f32[5]",
    "nested_reductions(X f32[6, 12]) -> Norm f32[6], Mean f32[6], Range f32[6], Centered f32[6, 12]",
    "two_axis_sum(X f32[4, 5, 6]) -> S f32[5]",
    "floor_index_arithmetic(X f32[6]) -> Wrapped f32[10], Halved f32[10], Clamped f32[10], Signed f32[9, 4]",
    "math_functions(X f32[24]) -> Log f32[24], Sqrt f32[24], Rsqrt f32[24], Erf f32[24], Floor f32[24], Ceil f32[24], "
    "Pow f32[24], FloatMod f32[24]",
    "i32_arithmetic(A i32[64], B i32[64]) -> Sum i32[64], Difference i32[64], Product i32[64], Quotient i32[64], "
    "Remainder i32[64], Negated i32[64]",
    "i32_matmul_wrapping(A i32[6, 9], B i32[9, 5]) -> C i32[6, 5]",
    "i8_arithmetic(A i8[40], B i8[40]) -> Sum i8[40], Product i8[40], Quotient i8[40], Remainder i8[40], Larger i8[40]",
    "u8_arithmetic(A u8[40], B u8[40]) -> Sum u8[40], Difference u8[40], Product u8[40], Quotient u8[40], Remainder u8[40]",
    "f64_ops(A f64[8, 9], B f64[9, 7]) -> C f64[8, 7], D f64[8, 9]",
    "f16_matmul(A f16[8, 16], B f16[16, 9]) -> C f16[8, 9]",
    "f16_elementwise(X f16[30], Y f16[30]) -> Z f16[30], G f16[30]",
    "bf16_conv2d(X bf16[1, 2, 6, 6], const W bf16[3, 2, 3, 3]) -> Y bf16[1, 3, 6, 6]",
    "bf16_softmax(X bf16[4, 10]) -> Y bf16[4, 10]",
    "comparisons(X f32[6, 7], Y f32[7]) -> Greater bool[6, 7], InRange bool[6, 7], Odd bool[6]",
    "bool_mask(X f32[5, 6], Mask bool[5, 6]) -> Y f32[5, 6]",
    "casts(X f32[32], Small i8[32]) -> Truncated i32[32], Half f16[32], Brain bf16[32], HalfRoundTrip f32[32], "
    "Widened f64[32], Narrowed i8[32], Bytes u8[32], Nonzero bool[32]",
    "bf16_dense_bias_relu(X bf16[40, 24], const W bf16[32, 24], const Bias f32[32]) -> Y bf16[40, 32]",
    "u8s8_matmul(A u8[7, 20], const B i8[20, 48]) -> C i32[7, 48]",
    "s8u8_matmul(A i8[24, 16], const B u8[16, 32]) -> C i32[24, 32]",
    "bf16_conv2d_nhwc_widened(X bf16[1, 5, 5, 6], const W bf16[3, 3, 6, 16]) -> Y f32[1, 5, 5, 16]",
    "bf16_dense_ragged(X bf16[9, 27], const W bf16[40, 27]) -> Y f32[9, 40]",
    "u8s8_matmul_ragged(A u8[5, 30], const B i8[30, 20]) -> C i32[5, 20]",
    "bf16_conv2d_nhwc_rgb(X bf16[1, 6, 6, 3], const W bf16[3, 3, 3, 32]) -> Y f32[1, 6, 6, 32]",
    "bf16_attention_scores(Q bf16[2, 16, 32], K bf16[2, 24, 32]) -> S f32[2, 16, 24]",
    "u8s8_matmul_activations(A u8[16, 64], B i8[64, 32]) -> C i32[16, 32]",
    "bf16_dense_tiles(X bf16[64, 96], const W bf16[64, 96], const Bias f32[64]) -> Y bf16[64, 64]",
    "u8s8_matmul_tiles(A u8[32, 128], const B i8[128, 48]) -> C i32[32, 48]",
    "s8s8_matmul_tiles(A i8[48, 64], const B i8[64, 32]) -> C i32[48, 32]",
    "bf16_batch_matmul_tiles(A bf16[2, 16, 64], const B bf16[2, 64, 32]) -> C f32[2, 16, 32]",
    "bf16_dense_tiles_of_10_rows(X bf16[20, 64], const W bf16[32, 64]) -> Y f32[20, 32]",
    "bf16_conv2d_tiles(X bf16[1, 4, 14, 32], const W bf16[3, 3, 32, 16]) -> Y f32[1, 4, 14, 16]",
    "bf16_dense_tiles_ragged_outputs(X bf16[16, 64], const W bf16[40, 64], const Bias f32[40]) -> Y bf16[16, 40]",
    "u8s8_matmul_tiles_ragged_outputs(A u8[32, 64], const B i8[64, 20]) -> C i32[32, 20]",
    "u8s8_conv2d_tiles(X u8[1, 3, 7, 64], const W i8[3, 3, 64, 32]) -> C i32[1, 3, 7, 32]",
    "f16_matmul_tensor_cores(A f16[64, 48], B f16[48, 32]) -> C f16[64, 32]",
    "bf16_conv2d_tensor_cores(X bf16[1, 3, 20, 32], const W bf16[3, 3, 32, 16]) -> Y f32[1, 3, 20, 16]",
    "f32_matmul_tf32(A f32[32, 24], B f32[24, 40]) -> C f32[32, 40]",
    "f16_matmul_tensor_cores_ragged(A f16[50, 40], B f16[40, 20]) -> C f32[50, 20]",
    "two_outputs(X f32[4, 6]) -> U f32[4, 6], V f32[4]",
    "unused_input(X f32[4, 3], const Unused f32[5]) -> Y f32[4, 3]",
};

TEST(KernelTable, ListsEveryKernelWithItsArguments) {
  int count = -1;
  const ansor_kernel_info* table = ansor_test_kernels_kernels(&count);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(count, static_cast<int>(std::size(kExpectedSignatures)));
  std::set<std::string> workload_keys;
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(signature(table[i]), kExpectedSignatures[i]);
    EXPECT_NE(table[i].call, nullptr) << table[i].name;
    EXPECT_NE(std::string(table[i].schedule), "") << table[i].name;
    EXPECT_GE(table[i].flops, 0.0) << table[i].name;
    EXPECT_TRUE(workload_keys.insert(table[i].workload_key).second)
        << table[i].name << ": different computations must have different workload keys";
  }
  EXPECT_EQ(find_test_kernel("no_such_kernel"), nullptr);
}

TEST(KernelTable, CountsMatmulFlops) {
  const ansor_kernel_info* matmul = find_test_kernel("matmul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->flops, 2.0 * 13 * 17 * 11);
}

TEST(KernelStructure, IntermediateReadByTwoOutputs) {
  Tensor<float> x({4, 6}), u({4, 6}), v({4});
  fill_random(x, 141);
  ASSERT_NO_FATAL_FAILURE(call_kernel("two_outputs", ansor_test_kernels_two_outputs, x, u, v));

  Reference expected_u({4, 6}), expected_v({4});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      double t = 2.0 * x(i, j);
      expected_u(i, j) = t + 1;
      expected_v(i) += t * t;
    }
  expect_close(u, expected_u, kernel_tolerance("two_outputs"));
  expect_close(v, expected_v, kernel_tolerance("two_outputs"));
}

TEST(KernelStructure, UnusedInputIsAnArgument) {
  Tensor<float> x({4, 3}), unused({5}), y({4, 3});
  fill_random(x, 142);
  fill_random(unused, 143);
  ASSERT_NO_FATAL_FAILURE(call_kernel("unused_input", ansor_test_kernels_unused_input, x, unused, y));

  Reference expected({4, 3});
  for (size_t i = 0; i < x.size(); ++i) expected[i] = double{x[i]} * x[i];
  expect_close(y, expected, kernel_tolerance("unused_input"));
}

TEST(KernelStructure, ConcurrentCallsGiveTheSameResult) {
  Tensor<float> x({1, 3, 9, 9}), w({4, 3, 3, 3}), y({1, 4, 5, 5});
  fill_random(x, 144);
  fill_random(w, 145);
  ASSERT_EQ(ansor_test_kernels_conv2d_stride2(x.data(), w.data(), y.data()), 0);

  constexpr int kThreads = 4, kCallsPerThread = 25;
  std::vector<Tensor<float>> outputs;
  for (int t = 0; t < kThreads; ++t) outputs.emplace_back(std::vector<int64_t>{1, 4, 5, 5});
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCallsPerThread; ++call) {
        bool ok = ansor_test_kernels_conv2d_stride2(x.data(), w.data(), outputs[t].data()) == 0 &&
                  std::memcmp(outputs[t].data(), y.data(), y.bytes()) == 0;
        failures[t] += ok ? 0 : 1;
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace kernel_tests
