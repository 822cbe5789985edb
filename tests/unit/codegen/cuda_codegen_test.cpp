// GPU programs of every kernel of tests/kernels/kernels.def (every built-in, every dtype): the
// default GPU schedule and programs sampled with many seeds lower within an sm_80's limits and,
// run block by block in the interpreter, compute what the naive program computes; the CUDA
// emitted for them compiles with nvcc for sm_80 and sm_90, the default schedules without
// register spills (skipped with a message where nvcc is absent).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>

#include "codegen/cpp_generator.h"
#include "codegen/cuda_generator.h"
#include "dag/output_tolerance.h"
#include "lower/gpu_launch.h"
#include "lower/lower.h"
#include "measure/compiler.h"
#include "measure/cuda_device.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "test_support.h"
#include "warp_rows.h"

namespace ansor {
namespace {

// Fewer under sanitizers, where the interpreter runs several times slower.
constexpr int kSeedsPerKernel = test::kSanitizedBuild ? 2 : 8;

struct GpuProgram {
  std::string kernel;
  std::string symbol;  // "default_K" or "seedN_K"
  State state;
  LoweredKernel lowered;
};

struct GpuPrograms {
  Program program;
  std::vector<GpuProgram> programs;
  int over_limits = 0;  // sampled programs check_gpu_limits refused
};

// The kernel tests' kernels (softmax and layer_norm over long rows among them, which GPU
// sketches reduce across threads), and a long reduction of f64 to a scalar.
const Program& test_kernels() {
  static const Program program = [] {
    std::ifstream in(std::string(ANSOR_SOURCE_DIR) + "/tests/kernels/kernels.def");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text += R"(
kernel long_max_to_scalar {
  X = input f64[150]
  M[i:1] = max(k:150, X[k] - 1.0)
}
)";
    return test::parse(text, "kernels.def");
  }();
  return program;
}

// With the tensor cores' warp rows, as the CUDA backend's context has them.
SamplerContext sm80() { return test::gpu_context_with_warp_rows(parse_target("cuda:sm_80")); }

LoweredKernel lower_for_sm80(const State& state, const std::string& symbol) {
  LowerOptions options;
  options.target = parse_target("cuda:sm_80");
  return lower_state(state, symbol, options);
}

// Lowered once for all tests: each kernel's default program and its sampled ones within limits.
const GpuPrograms& gpu_programs() {
  static const GpuPrograms programs = [] {
    GpuPrograms out;
    const SamplerContext ctx = sm80();
    for (const Kernel& k : test_kernels().kernels) {
      auto dag = std::make_shared<const ComputeDAG>(k.dag);
      State chosen = default_schedule(dag, ctx);
      out.programs.push_back({k.name, "default_" + k.name, chosen, lower_for_sm80(chosen, "default_" + k.name)});
      for (uint64_t seed = 0; seed < kSeedsPerKernel; ++seed) {
        State sampled = random_program(dag, ctx, seed);
        std::string symbol = fmt::format("seed{}_{}", seed, k.name);
        LoweredKernel lowered = lower_for_sm80(sampled, symbol);
        try {
          check_gpu_limits(lowered, ctx.gpu_limits);
        } catch (const InvalidState&) {
          ++out.over_limits;
          continue;
        }
        out.programs.push_back({k.name, symbol, sampled, std::move(lowered)});
      }
    }
    return out;
  }();
  return programs;
}

bool has(const Stmt& body, const std::function<bool(const Stmt&)>& what) {
  bool found = false;
  for_each_stmt(body, [&](const Stmt& s) { found = found || what(s); });
  return found;
}

TEST(CudaProgramsTest, DefaultAndSampledGpuProgramsOfEveryTestKernelMatchTheNaiveProgram) {
  const GpuPrograms& gpu = gpu_programs();
  std::map<std::string, std::pair<std::vector<std::vector<double>>, std::vector<std::vector<double>>>> reference;  // inputs, outputs
  int shared = 0, barriers = 0, across_threads = 0, tensor_cores = 0;
  for (const GpuProgram& p : gpu.programs) {
    auto it = reference.find(p.kernel);
    if (it == reference.end()) {
      LoweredKernel naive = lower_state(State(p.state.dag_ptr()), "naive");
      std::vector<std::vector<double>> inputs = test::random_args(naive, 7);
      // No integer division by zero (the integer kernels divide by their inputs).
      for (size_t a = 0; a < inputs.size(); ++a)
        if (!dtype_is_float(naive.buffers[naive.params[a]].dtype))
          for (double& x : inputs[a]) x = x == 0 ? 1 : x;
      std::vector<std::vector<double>> outputs = inputs;
      interpret(naive, outputs);
      it = reference.emplace(p.kernel, std::make_pair(inputs, outputs)).first;
    }
    if (p.symbol.rfind("default_", 0) == 0) {
      EXPECT_NO_THROW(check_gpu_limits(p.lowered, sm80().gpu_limits)) << p.symbol;
    }
    std::vector<std::vector<double>> args = test::packed_args(p.lowered, it->second.first);
    try {
      interpret(p.lowered, args);
    } catch (const std::runtime_error& e) {
      ADD_FAILURE() << p.symbol << ": " << e.what();
      continue;
    }
    const double tolerance = output_tolerance(p.state.dag());
    for (size_t a = 0; a < args.size(); ++a) {
      const Buffer& b = p.lowered.buffers[p.lowered.params[a]];
      if (!b.is_output) continue;
      const std::vector<double>& want = it->second.second[a];
      double largest = 0;
      for (double w : want) largest = std::max(largest, std::fabs(w));
      for (size_t e = 0; e < want.size(); ++e)
        ASSERT_TRUE(within_output_tolerance(args[a][e], want[e], tolerance, largest))
            << p.symbol << " output " << b.name << " element " << e << ": " << args[a][e] << " instead of " << want[e];
    }
    const LoweredKernel& k = p.lowered;
    shared += std::any_of(k.buffers.begin(), k.buffers.end(), [](const Buffer& b) { return b.scope == BufferScope::Shared; });
    barriers += has(k.body, [](const Stmt& s) { return s->kind == StmtKind::Barrier; });
    across_threads += has(k.body, [](const Stmt& s) {
      auto* st = s->as<StoreNode>();
      return st && st->across_threads;
    });
    tensor_cores += !k.tensor_calls.empty();
  }
  std::printf("%zu GPU programs of %zu kernels checked (%d sampled ones over an sm_80's limits left out): %d with shared memory, "
              "%d with barriers, %d reducing across threads, %d on tensor cores\n",
              gpu.programs.size(), test_kernels().kernels.size(), gpu.over_limits, shared, barriers, across_threads, tensor_cores);
  // The default and every sampled program of a kernel, but for a few over the limits.
  EXPECT_GE(gpu.programs.size(), test_kernels().kernels.size() * kSeedsPerKernel);
  EXPECT_GE(shared, 40);
  EXPECT_GE(barriers, 40);
  // Three kernels reduce across threads in each of their programs, five use tensor cores.
  EXPECT_GE(across_threads, 3 * (kSeedsPerKernel + 1));
  EXPECT_GE(tensor_cores, 5 * (kSeedsPerKernel + 1));
}

TEST(CudaProgramsTest, LimitsOfTheTargetAreEnforced) {
  const GpuProgram& matmul = gpu_programs().programs.front();
  ASSERT_EQ(matmul.kernel, "matmul");
  GpuLimits small = sm80().gpu_limits;
  small.max_threads_per_block = 8;
  EXPECT_THROW(check_gpu_limits(matmul.lowered, small), InvalidState);
  small = sm80().gpu_limits;
  small.max_shared_bytes_per_block = 16;
  try {
    check_gpu_limits(matmul.lowered, small);
    FAIL() << "shared memory over the limit passed";
  } catch (const InvalidState& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory per block, more than the 16 allowed"), std::string::npos) << e.what();
  }
}

// A code generator prints programs lowered for its kind of target only: the decisions it prints
// (launches, index type, vector copies) are the target's.
TEST(CudaProgramsTest, EachGeneratorRefusesAProgramLoweredForTheOtherKindOfTarget) {
  const GpuProgram& matmul = gpu_programs().programs.front();
  const CppGenerator cpp;
  const CudaGenerator cuda;
  EXPECT_THROW(cpp.kernel_definitions(matmul.lowered, matmul.state.dag(), "k", "k", "test"), std::invalid_argument);
  LoweredKernel for_cpu = lower_state(State(matmul.state.dag_ptr()), "k");
  EXPECT_THROW(cuda.kernel_definitions(for_cpu, matmul.state.dag(), "k", "k", "test"), std::invalid_argument);
  EXPECT_NO_THROW(cpp.kernel_definitions(for_cpu, matmul.state.dag(), "k", "k", "test"));
}

// The emitted CUDA of `programs` in one translation unit.
std::string cuda_unit(const std::vector<const GpuProgram*>& programs) {
  const CudaGenerator cuda;
  std::string source = cuda.source_prelude() + "\n";
  for (const GpuProgram* p : programs) source += cuda.kernel_definitions(p->lowered, p->state.dag(), p->kernel, p->symbol, "test") + "\n";
  return source;
}

// A softmax or layer_norm over long rows is one launch by default: a block per row, whose
// threads reduce the row together for each statistic and keep the results in registers, every
// thread storing its copy (a store by the first thread alone would leave the others without).
TEST(CudaProgramsTest, NormalisationsOverLongRowsAreOneLaunchWithTheRowsResultsInRegisters) {
  for (const char* kernel : {"softmax_long_rows", "layer_norm_long_rows"}) {
    const GpuProgram* p = nullptr;
    for (const GpuProgram& candidate : gpu_programs().programs)
      if (candidate.symbol == std::string("default_") + kernel) p = &candidate;
    ASSERT_NE(p, nullptr) << kernel;
    EXPECT_EQ(p->lowered.launches.size(), 1u) << kernel;
    int into_registers = 0;
    has(p->lowered.body, [&](const Stmt& s) {
      auto* st = s->as<StoreNode>();
      if (st && st->across_threads && p->lowered.find_buffer(st->buffer)->scope == BufferScope::Local) ++into_registers;
      return false;
    });
    EXPECT_EQ(into_registers, 2) << kernel;
    const std::string source = cuda_unit({p});
    EXPECT_FALSE(std::regex_search(source, std::regex(R"(if \(\w+ == 0\) \w+\[)"))) << source;
    EXPECT_TRUE(std::regex_search(source, std::regex(R"(\n\s*\w+\[0\] = ansor_combined;)"))) << source;
  }
}

// What of a CUDA unit nvcc compiles: its device code alone (to a cubin), or the host code too.
enum class NvccOutput { DeviceCode, Object };

// nvcc's output compiling `source` for `arch` with ptxas's resource report; fails the test on an
// error.
std::string compile_with_nvcc(const std::string& nvcc, const std::string& source, const std::string& arch, NvccOutput output_kind) {
  std::filesystem::path dir = test::test_temp_dir("cuda_codegen_" + arch);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "unit.cu") << source;
  const bool object = output_kind == NvccOutput::Object;
  std::string command = fmt::format("{} -std=c++17 -O3 -arch={} -Xptxas -v -I{} {} {} -o {} 2>&1; echo \"exit $?\"", shell_quote(nvcc), arch,
                                    shell_quote(std::string(ANSOR_SOURCE_DIR) + "/runtime/include"), object ? "-c" : "-cubin",
                                    shell_quote((dir / "unit.cu").string()), shell_quote((dir / (object ? "unit.o" : "unit.cubin")).string()));
  std::string output = run_command_output(command);
  EXPECT_NE(output.find("exit 0"), std::string::npos) << output.substr(0, 4000);
  EXPECT_EQ(output.find("warning"), std::string::npos) << output.substr(0, 4000);
  std::filesystem::remove_all(dir);
  return output;
}

// Per kernel function ptxas reported on, its spill stores and loads in bytes.
std::map<std::string, int> spilled_bytes(const std::string& ptxas) {
  std::map<std::string, int> spills;
  std::regex function("Function properties for (\\S+)\\n[^\\n]*?(\\d+) bytes spill stores, (\\d+) bytes spill loads");
  for (std::sregex_iterator it(ptxas.begin(), ptxas.end(), function), end; it != end; ++it)
    spills[(*it)[1]] = std::stoi((*it)[2]) + std::stoi((*it)[3]);
  return spills;
}

TEST(CudaCompileTest, EmittedCudaCompilesWithNvccAndDefaultSchedulesDoNotSpill) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc on this machine: the emitted CUDA is not compiled";
  // The default programs, and the sampled ones of the first seeds (compiling takes time), with
  // every reduction across threads.
  std::vector<const GpuProgram*> defaults, sampled;
  for (const GpuProgram& p : gpu_programs().programs) {
    if (p.symbol.rfind("default_", 0) == 0) {
      defaults.push_back(&p);
    } else if (p.symbol.rfind("seed0_", 0) == 0 || p.symbol.rfind("seed1_", 0) == 0 || p.kernel.find("long_") != std::string::npos) {
      sampled.push_back(&p);
    }
  }
  const std::string default_unit = cuda_unit(defaults), sampled_unit = cuda_unit(sampled);
  if (test::kSanitizedBuild) GTEST_SKIP() << "nvcc's work does not depend on this build's sanitizers: the Release stage compiles the units";
  // Compiling the host side (the launches) took a fifth of this test: the default programs' unit
  // compiles it once, for sm_80, and the others their device code alone (the emulated CUDA
  // libraries compile every sampled program's host side as C++).
  for (const char* arch : {"sm_80", "sm_90"}) {
    const NvccOutput output = std::string(arch) == "sm_80" ? NvccOutput::Object : NvccOutput::DeviceCode;
    std::map<std::string, int> spills = spilled_bytes(compile_with_nvcc(nvcc, default_unit, arch, output));
    EXPECT_GE(spills.size(), defaults.size()) << arch;
    for (const auto& [function, bytes] : spills) EXPECT_EQ(bytes, 0) << arch << ": " << function << " spills";
  }
  std::map<std::string, int> spills = spilled_bytes(compile_with_nvcc(nvcc, sampled_unit, "sm_80", NvccOutput::DeviceCode));
  EXPECT_GE(spills.size(), sampled.size());
}

}  // namespace
}  // namespace ansor
