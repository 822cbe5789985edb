// Compile throughput of the builder: random-policy candidates of the paper's GEMM and a ResNet
// convolution compiled with 1, 2, 4 and 8 candidates per translation unit (the compiler's
// start-up paid once per unit), two compilers at a time, as tuning builds them.
//
//   bench_compile_throughput [--candidates N] [--seed S]
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "bench_support.h"
#include "measure/builder.h"
#include "measure/host_target.h"
#include "measure/measurer.h"
#include "sampler/annotation.h"

using namespace ansor;

namespace {

std::vector<Candidate> sample_candidates(const Kernel& kernel, const Target& target, int count, uint64_t seed) {
  auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
  SamplerContext ctx = SamplerContext::for_target(target);
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
  Annotator annotator(ctx);
  std::mt19937_64 rng(seed);
  std::vector<Candidate> out;
  while (static_cast<int>(out.size()) < count) out.push_back({kernel.name, sample_program(sketches, annotator, rng), PlantedFault::None});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 32;
  uint64_t seed = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--candidates") count = std::stoi(argv[i + 1]);
    if (flag == "--seed") seed = std::stoull(argv[i + 1]);
  }
  KernelCompiler compiler = make_kernel_compiler();
  Target target = detect_host(compiler);
  fmt::print("compiling {} random candidates per row with {}, 2 compilers at a time\n\n", count, compiler.identity());
  fmt::print("{:<8} {:>14} {:>10} {:>14} {:>7}\n", "kernel", "per unit", "seconds", "candidates/s", "failed");
  for (const char* name : {"matmul", "conv2d"}) {
    Kernel kernel = bench::load_kernel(bench::kPaperKernels, name);
    std::vector<Candidate> candidates = sample_candidates(kernel, target, count, seed);
    for (int per_unit : {1, 2, 4, 8}) {
      BuildOptions options;
      options.parallel = 2;
      options.per_unit = per_unit;
      options.runtime_include = default_runtime_include();
      options.work_dir = (std::filesystem::temp_directory_path() / fmt::format("ansor-bench-compile-{}", ::getpid())).string();
      Builder builder(compiler, code_generator_for(Target::Kind::Cpu), options);
      auto start = std::chrono::steady_clock::now();
      std::vector<BuildResult> built = builder.build(candidates);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      int failed = 0;
      std::string why;
      for (const BuildResult& b : built)
        if (b.error != MeasureError::None && failed++ == 0) why = fmt::format("  ({}: {})", measure_error_name(b.error), b.message);
      fmt::print("{:<8} {:>14} {:>10.1f} {:>14.2f} {:>7}{}\n", name, per_unit, seconds, count / seconds, failed, why);
      std::filesystem::remove_all(options.work_dir);
    }
  }
  return 0;
}
