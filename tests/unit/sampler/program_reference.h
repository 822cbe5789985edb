// Shared by the mutation and crossover tests: one small kernel per operator kind, and the check
// that a program computes what the kernel's naive program computes, run in the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "schedule/state.h"
#include "test_support.h"

namespace ansor::test {

inline constexpr const char* kOperatorKernels = R"(
kernel matmul {
  A = input f32[24, 16]
  B = const f32[16, 20]
  C = matmul(A, B)
}
kernel conv_bias_relu {
  X = input f32[1, 4, 7, 7]
  W = const f32[6, 4, 3, 3]
  b = const f32[6]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel softmax {
  X = input f32[6, 20]
  Y = softmax(X)
}
kernel layer_norm {
  X = input f32[3, 24]
  g = const f32[24]
  b = const f32[24]
  Y = layer_norm(X, g, b)
}
kernel bias_gelu {
  X = input f32[6, 40]
  b = const f32[40]
  Y = gelu(bias_add(X, b, axis = 1))
}
kernel row_norm {
  X = input f32[5, 48]
  S[i:5] = sqrt(sum(k:48, X[i, k] * X[i, k]))
}
kernel two_layers {
  X = input f32[8, 12]
  W1 = const f32[12, 16]
  W2 = const f32[16, 10]
  H = relu(matmul(X, W1))
  Y = matmul(H, W2)
}
)";

// The naive program's outputs on random inputs, to compare other programs of the DAG with.
class ProgramReference {
 public:
  explicit ProgramReference(const std::shared_ptr<const ComputeDAG>& dag) : naive_(lower_state(State(dag), "naive")) {
    inputs_ = random_args(naive_, 3);
    expected_ = inputs_;
    interpret(naive_, expected_);
  }

  ::testing::AssertionResult matches(const State& program) const {
    LoweredKernel k;
    std::vector<std::vector<double>> args;
    try {
      k = lower_state(program, "k");
      args = packed_args(k, inputs_);
      interpret(k, args);
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << "does not lower and run: " << e.what() << "\n" << describe_steps(program);
    }
    for (size_t p = 0; p < args.size(); ++p) {
      if (!naive_.buffers[naive_.params[p]].is_output) continue;
      for (size_t e = 0; e < args[p].size(); ++e)
        if (!(std::fabs(args[p][e] - expected_[p][e]) <= 1e-4 * std::max(1.0, std::fabs(expected_[p][e]))))
          return ::testing::AssertionFailure() << "element " << e << " is " << args[p][e] << ", expected " << expected_[p][e] << "\n"
                                               << describe_steps(program) << to_string(k);
    }
    return ::testing::AssertionSuccess();
  }

 private:
  LoweredKernel naive_;
  std::vector<std::vector<double>> inputs_, expected_;
};

}  // namespace ansor::test
