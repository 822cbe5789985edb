// Feature extraction throughput: random programs of a 512³ matmul and of a conv2d (NHWC,
// C = K = 128, 28×28, 3×3, pad 1, + bias + relu), lowered with unrolled loops kept and
// featurised, as the search does for every program it ranks. Prints µs per program for lowering
// alone, extraction alone and both, and the rows per program (and the statements the compiled
// program would have, for comparison).
//
//   bench_feature_throughput [--programs N] [--seed S]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

#include "features/features.h"
#include "lang/program.h"
#include "lower/lower.h"
#include "sampler/annotation.h"

using namespace ansor;

namespace {

constexpr const char* kKernels = R"(
kernel matmul512 {
  A = input f32[512, 512]
  B = const f32[512, 512]
  C[i:512, j:512] = sum(k:512, A[i, k] * B[k, j])
}
kernel conv2d {
  X = input f32[1, 28, 28, 128]
  W = const f32[3, 3, 128, 128]
  b = const f32[128]
  Y = relu(bias_add(conv2d_nhwc(X, W, pad = 1), b, axis = 3))
}
)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int count_stores(const Stmt& body) {
  int n = 0;
  for_each_stmt(body, [&n](const Stmt& s) { n += s->kind == StmtKind::Store; });
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 500;
  uint64_t seed = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--programs") count = std::stoi(argv[i + 1]);
    if (flag == "--seed") seed = std::stoull(argv[i + 1]);
  }
  auto file = std::make_shared<SourceFile>();
  file->path = "feature_throughput.def";
  file->text = kKernels;
  Program program = load_program(file);
  SamplerContext ctx = SamplerContext::for_cpu(Target{});
  fmt::print("{} random programs per kernel (CPU sketches)\n\n", count);
  fmt::print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>14}\n", "kernel", "lower µs", "extract µs", "total µs", "rows", "rows (max)",
             "stores compiled");
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
    Annotator annotator(ctx);
    std::mt19937_64 rng(seed);
    std::vector<State> states;
    while (static_cast<int>(states.size()) < count) states.push_back(sample_program(sketches, annotator, rng));

    double lower_seconds = 0, extract_seconds = 0;
    size_t rows = 0, max_rows = 0, compiled_stores = 0;
    for (const State& s : states) {
      auto start = std::chrono::steady_clock::now();
      LoweredKernel lowered = lower_for_features(s);
      lower_seconds += seconds_since(start);
      start = std::chrono::steady_clock::now();
      std::vector<StoreFeatures> features = extract_features(lowered);
      extract_seconds += seconds_since(start);
      rows += features.size();
      max_rows = std::max(max_rows, features.size());
      compiled_stores += static_cast<size_t>(count_stores(lower_state(s, "k").body));
    }
    double n = static_cast<double>(states.size());
    fmt::print("{:<10} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>12} {:>14.1f}\n", kernel.name, 1e6 * lower_seconds / n, 1e6 * extract_seconds / n,
               1e6 * (lower_seconds + extract_seconds) / n, static_cast<double>(rows) / n, max_rows, static_cast<double>(compiled_stores) / n);
  }
  return 0;
}
