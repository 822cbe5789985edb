// Helpers shared by the unit tests: kernels.def text to programs and DAGs, scratch directories,
// random arguments for loop programs run in the interpreter (const inputs packed where a
// schedule packs them).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/lowered_kernel.h"
#include "records/record.h"
#include "../sanitized_build.h"

namespace ansor::test {

// A valid file of two small kernels (a matmul with a const operand, an integer add) that the
// command-line and library tests share.
constexpr const char* kTwoKernelsDef = R"(kernel mm {
  A = input f32[4, 6]
  B = const f32[6, 5]
  C = matmul(A, B)
}
kernel add1 {
  X = input i32[3]
  Y[i:3] = X[i] + 1
}
)";

using ansor_test::kSanitizedBuild;

inline Program parse(const std::string& text, const std::string& path = "test.def") {
  auto file = std::make_shared<SourceFile>();
  file->path = path;
  file->text = text;
  return load_program(file);
}

// A scratch directory path of the running test, unique across concurrently running test
// processes; the caller creates and removes it.
inline std::filesystem::path test_temp_dir(const std::string& prefix) {
  return std::filesystem::temp_directory_path() /
         (prefix + "_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

// A row-major buffer of `shape`, a parameter of f32 unless told otherwise.
inline Buffer buffer(const std::string& name, std::vector<int64_t> shape, BufferScope scope = BufferScope::Param, DType dtype = DType::F32) {
  Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.strides = row_major_strides(shape);
  b.shape = std::move(shape);
  b.scope = scope;
  return b;
}

// The GPU the tests of GPU programs lower for.
inline const Target& sm80() {
  static const Target t = parse_target("cuda:sm_80");
  return t;
}

// `s` lowered for `target` as the function "k".
inline LoweredKernel lower_for(const State& s, const Target& target) {
  LowerOptions options;
  options.target = target;
  return lower_state(s, "k", options);
}

inline std::shared_ptr<const ComputeDAG> dag_of(const Program& program, const std::string& kernel) {
  return std::make_shared<const ComputeDAG>(program.find(kernel)->dag);
}

// One buffer per parameter: inputs random (floats exact in f32, small integers), outputs NaN.
inline std::vector<std::vector<double>> random_args(const LoweredKernel& k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-20, 20), non_negative(0, 20);
  std::vector<std::vector<double>> args;
  for (int p : k.params) {
    const Buffer& b = k.buffers[p];
    std::vector<double> data(static_cast<size_t>(b.num_elements()), std::nan(""));
    if (!b.is_output)
      for (double& x : data) x = dtype_is_float(b.dtype) ? static_cast<float>(real(rng)) : dtype_is_signed(b.dtype) ? small(rng) : non_negative(rng);
    args.push_back(std::move(data));
  }
  return args;
}

// The arguments of `k` from the plain ones: const inputs packed by k's packers.
inline std::vector<std::vector<double>> packed_args(const LoweredKernel& k, const std::vector<std::vector<double>>& plain) {
  std::vector<std::vector<double>> args = plain;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Buffer& b = k.buffers[k.params[i]];
    if (const LoweredKernel* packer = k.find_packer(b.name)) args[i] = pack_input(*packer, plain[i]);
  }
  return args;
}

// Random inputs exact in their element types (f16 and bf16 multiples of 1/64 in [-2, 2], 8-bit
// integers over their whole range, f32 in [-1, 1]), outputs NaN: a narrow-typed program then
// computes from the same values the naive program reads.
inline std::vector<std::vector<double>> exact_typed_args(const LoweredKernel& k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> args;
  for (int p : k.params) {
    const Buffer& b = k.buffers[p];
    std::vector<double> data(static_cast<size_t>(b.num_elements()), std::nan(""));
    for (double& x : data) {
      if (b.is_output) break;
      switch (b.dtype) {
        case DType::F16:
        case DType::BF16: x = static_cast<double>(std::uniform_int_distribution<int>(-128, 128)(rng)) / 64; break;
        case DType::U8: x = std::uniform_int_distribution<int>(0, 255)(rng); break;
        case DType::I8: x = std::uniform_int_distribution<int>(-128, 127)(rng); break;
        default: x = std::uniform_real_distribution<double>(-1, 1)(rng); break;
      }
    }
    args.push_back(std::move(data));
  }
  return args;
}

// Whether `k` computes the outputs of `naive` (a program of the same DAG) on exact_typed_args:
// floats within the rounding of another f32 summation order, integers exactly.
inline ::testing::AssertionResult computes_like(const LoweredKernel& naive, const LoweredKernel& k) {
  std::vector<std::vector<double>> expected = exact_typed_args(naive, 7);
  std::vector<std::vector<double>> args = packed_args(k, expected);
  interpret(naive, expected);
  interpret(k, args);
  for (size_t p = 0; p < args.size(); ++p) {
    const Buffer& b = naive.buffers[naive.params[p]];
    if (!b.is_output) continue;
    for (size_t e = 0; e < args[p].size(); ++e) {
      const double tolerance = dtype_is_float(b.dtype) ? 1e-5 * std::max(1.0, std::fabs(expected[p][e])) : 0.0;
      if (!(std::fabs(args[p][e] - expected[p][e]) <= tolerance))
        return ::testing::AssertionFailure() << b.name << " element " << e << " is " << args[p][e] << ", expected " << expected[p][e];
    }
  }
  return ::testing::AssertionSuccess();
}

// The target and compiler of the records that the records tests make.
inline constexpr const char* kRecordTarget = "cpu:x86_64:testcpu:avx2:t2";
inline constexpr const char* kRecordCompiler = "clang++ (test) -O3";

// A successful record of kernel `k` (the dag's kernel) measured at `seconds` per call.
inline Record make_record(const ComputeDAG& dag, const std::string& target, const std::string& compiler, double seconds,
                          std::vector<StepPtr> steps = {}) {
  Record r;
  r.workload_key = dag.workload_key();
  r.dag = dag.canonical_text();
  r.kernel = "k";
  r.target = target;
  r.compiler = compiler;
  r.steps = std::move(steps);
  r.seconds = seconds;
  r.repeats = 3;
  return r;
}

}  // namespace ansor::test
