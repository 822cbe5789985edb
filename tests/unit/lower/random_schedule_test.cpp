// The property test of the lowering: thousands of random valid step sequences, drawn from every
// transform step, over every operator kind of the test kernels, lower to loop programs that
// compute what the naive program computes. Programs run in the loop-program interpreter (compiling
// each would take far too long); seeds are reproducible and printed on failure with the steps
// and the lowered program.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "dag/output_tolerance.h"
#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "schedule/random_schedule.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kRandomScheduleKernels = R"(
kernel matmul {
  A = input f32[12, 10]
  B = input f32[10, 14]
  C[i:12, j:14] = sum(k:10, A[i, k] * B[k, j])
}
kernel conv_bias_relu {
  X = input f32[1, 4, 6, 6]
  W = const f32[5, 4, 3, 3]
  b = const f32[5]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel depthwise_stride2 {
  X = input f32[1, 3, 9, 9]
  W = const f32[3, 1, 3, 3]
  Y = depthwise_conv2d_nchw(X, W, stride = 2, pad = 1)
}
kernel dense_relu {
  X = input f32[6, 20]
  W = const f32[9, 20]
  Y = relu(dense(X, W))
}
kernel batch_matmul {
  A = input f32[2, 5, 7]
  B = input f32[2, 7, 3]
  C = batch_matmul(A, B)
}
kernel softmax {
  X = input f32[5, 7]
  Y = softmax(X)
}
kernel layer_norm {
  X = input f32[4, 6]
  g = const f32[6]
  b = const f32[6]
  Y = layer_norm(X, g, b)
}
kernel max_pool {
  X = input f32[1, 2, 7, 7]
  Y = max_pool2d(X, size = 3, stride = 2, pad = 1)
}
kernel row_norm {
  X = input f32[6, 40]
  S[i:6] = sqrt(sum(k:40, X[i, k] * X[i, k]))
}
kernel layout {
  X = input f32[3, 4, 5]
  Y = reshape(transpose(X, perm = [2, 0, 1]), shape = [5, -1])
}
kernel conv_transpose {
  X = input f32[1, 2, 4, 4]
  W = const f32[2, 3, 3, 3]
  Y = conv2d_transpose_nchw(X, W, stride = 2, pad = 1, output_pad = 1)
}
kernel int_ops {
  A = input i32[6, 5]
  B = input i32[5]
  C[i:6, j:5] = A[i, j] * 3 - B[j] % 4 + (A[i, j] / 2)
}
)";

// ANSOR_SCHEDULES_PER_KERNEL raises the count for a longer search than CI's.
int schedules_per_kernel() {
  const char* env = std::getenv("ANSOR_SCHEDULES_PER_KERNEL");
  return env ? std::max(1, std::atoi(env)) : 180;
}

Program load_test_kernels() { return test::parse(kRandomScheduleKernels, "random_schedule_test.def"); }

TEST(RandomScheduleTest, RandomSchedulesMatchTheNaiveProgram) {
  Program program = load_test_kernels();
  const int per_kernel = schedules_per_kernel();
  int total = 0, with_steps = 0;
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    LoweredKernel naive = lower_state(State(dag), kernel.name);
    std::vector<std::vector<double>> reference = test::random_args(naive, 7);
    std::vector<std::vector<double>> inputs = reference;
    interpret(naive, reference);
    const double tolerance = output_tolerance(*dag);
    for (int seed = 0; seed < per_kernel; ++seed) {
      SCOPED_TRACE(kernel.name + " seed " + std::to_string(seed));
      // Random GPU bindings nest thread loops arbitrarily, which on a GPU (and in the interpreter,
      // which runs GPU programs as a GPU does) leaves iterations unrun: CPU schedules only.
      State state = random_schedule(dag, static_cast<uint64_t>(seed), {12 + seed % 8, false});
      std::string context;
      try {
        LoweredKernel lowered = lower_state(state, kernel.name);
        context = describe_steps(state) + to_string(lowered);
        std::vector<std::vector<double>> args = test::packed_args(lowered, inputs);
        interpret(lowered, args);
        for (size_t p = 0; p < args.size(); ++p) {
          if (!naive.buffers[naive.params[p]].is_output) continue;
          double largest = 0;
          for (double x : reference[p]) largest = std::max(largest, std::fabs(x));
          for (size_t e = 0; e < args[p].size(); ++e) {
            ASSERT_FALSE(std::isnan(args[p][e])) << "element " << e << " was never written\n" << context;
            ASSERT_TRUE(within_output_tolerance(args[p][e], reference[p][e], tolerance, largest))
                << "element " << e << ": " << args[p][e] << " instead of " << reference[p][e] << " (tolerance " << tolerance
                << ")\n" << context;
          }
        }
      } catch (const std::exception& e) {
        FAIL() << e.what() << "\n" << (context.empty() ? describe_steps(state) : context);
      }
      ++total;
      with_steps += state.steps().empty() ? 0 : 1;
    }
  }
  EXPECT_EQ(total, per_kernel * static_cast<int>(program.kernels.size()));
  EXPECT_GE(total, 2000);
  EXPECT_GT(with_steps, total * 9 / 10);
}

TEST(RandomScheduleTest, SameSeedSameSchedule) {
  Program program = load_test_kernels();
  auto dag = std::make_shared<const ComputeDAG>(program.find("conv_bias_relu")->dag);
  State a = random_schedule(dag, 42), b = random_schedule(dag, 42), c = random_schedule(dag, 43);
  EXPECT_EQ(a.signature(), b.signature());
  EXPECT_EQ(describe_steps(a), describe_steps(b));
  EXPECT_NE(a.signature(), c.signature());
}

}  // namespace
}  // namespace ansor
