// Compile throughput of the builder: random-policy candidates of the paper's GEMM and a ResNet
// convolution built in batches of 16 as tuning builds them, two compilers at a time, with 1, 2,
// 4 and 8 candidates per translation unit (the compiler's start-up paid once per unit) and with
// the unit size planned from compile times (unit_planner.h); with clang, each both with and
// without the precompiled runtime prelude.
//
//   bench_compile_throughput [--candidates N] [--seed S] [--kernel matmul|conv2d]
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "bench_support.h"
#include "backend/backend_registry.h"
#include "codegen/cpp_generator.h"
#include "measure/builder.h"
#include "measure/host_target.h"
#include "measure/measurer.h"
#include "sampler/annotation.h"

using namespace ansor;

namespace {

std::vector<Candidate> sample_candidates(const Kernel& kernel, const Target& target, int count, uint64_t seed) {
  auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
  SamplerContext ctx = sampler_context_for(target);
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
  Annotator annotator(ctx);
  std::mt19937_64 rng(seed);
  std::vector<Candidate> out;
  while (static_cast<int>(out.size()) < count) out.push_back({kernel.name, sample_program(sketches, annotator, rng), PlantedFault::None});
  return out;
}

// CPU seconds of the finished child processes (the compilers) so far: on a shared machine, what
// compiling costs whatever else runs.
double children_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 32;
  uint64_t seed = 0;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--candidates") count = std::stoi(argv[i + 1]);
    if (flag == "--seed") seed = std::stoull(argv[i + 1]);
    if (flag == "--kernel") only = argv[i + 1];
  }
  KernelCompiler compiler = make_kernel_compiler();
  Target target = detect_host(compiler);
  fmt::print("compiling {} random candidates per row with {}, 2 compilers at a time\n\n", count, compiler.identity());
  fmt::print("{:<8} {:>9} {:>5} {:>10} {:>14} {:>16} {:>7}\n", "kernel", "per unit", "pch", "seconds", "candidates/s", "cpu s/candidate",
             "failed");
  constexpr size_t kBatch = 16;
  for (const char* name : {"matmul", "conv2d"}) {
    if (!only.empty() && only != name) continue;
    Kernel kernel = bench::load_kernel(bench::kPaperKernels, name);
    std::vector<Candidate> candidates = sample_candidates(kernel, target, count, seed);
    for (int per_unit : {1, 2, 4, 8, 0}) {
      for (bool pch : {false, true}) {
        if (pch && !compiler.is_clang()) continue;
        BuildOptions options;
        options.parallel = 2;
        options.per_unit = per_unit;
        options.precompile_prelude = pch;
        options.runtime_include = default_runtime_include();
        options.work_dir = (std::filesystem::temp_directory_path() / fmt::format("ansor-bench-compile-{}", ::getpid())).string();
        const CppGenerator cpp;
        Builder builder(compiler, Target{}, cpp, options);
        auto start = std::chrono::steady_clock::now();
        double cpu_start = children_cpu_seconds();
        int failed = 0;
        std::string why;
        for (size_t begin = 0; begin < candidates.size(); begin += kBatch) {
          std::vector<Candidate> batch(candidates.begin() + begin, candidates.begin() + std::min(candidates.size(), begin + kBatch));
          for (const BuildResult& b : builder.build(batch))
            if (b.error != MeasureError::None && failed++ == 0) why = fmt::format("  ({}: {})", measure_error_name(b.error), b.message);
        }
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        double cpu = (children_cpu_seconds() - cpu_start) / count;
        fmt::print("{:<8} {:>9} {:>5} {:>10.1f} {:>14.2f} {:>16.2f} {:>7}{}\n", name, per_unit > 0 ? std::to_string(per_unit) : "planned",
                   pch ? "yes" : "no", seconds, count / seconds, cpu, failed, why);
        std::filesystem::remove_all(options.work_dir);
      }
    }
  }
  return 0;
}
