// Timing, building and loading for the benchmarks.
#include "bench_support.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "backend/backend_registry.h"
#include "codegen/cpp_generator.h"
#include "dag/output_tolerance.h"
#include "measure/builder.h"
#include "measure/cpu_variant.h"
#include "measure/host_target.h"
#include "records/record_filter.h"

namespace ansor::bench {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::string temp_path(const std::string& tag) {
  return (std::filesystem::temp_directory_path() / fmt::format("ansor-bench-{}-{}", tag, ::getpid())).string();
}

namespace {

// The compiler and target bench kernels are built for (build_kernels_for_cpu).
struct KernelBuild {
  KernelCompiler compiler;
  Target target;
};
KernelBuild& kernel_build() {
  static KernelBuild build = [] {
    KernelCompiler compiler = make_kernel_compiler();
    return KernelBuild{compiler, detect_host(compiler)};
  }();
  return build;
}

}  // namespace

void build_kernels_for_cpu(const std::string& cpu) {
  KernelCompiler compiler = make_kernel_compiler("", flags_for_cpu(default_kernel_flags(), cpu));
  Target target = resolve_target(cpu, compiler);
  kernel_build() = {std::move(compiler), std::move(target)};
}

std::unique_ptr<Measurer> host_measurer(const std::string& work_dir) {
  const KernelCompiler& compiler = kernel_build().compiler;
  MeasureOptions options;
  // As `ansor-gen tune` measures: a schedule that lowers to a program measured before gets a
  // copy of that measurement, which is no trial.
  options.reuse_programs = true;
  options.worker_path = ANSOR_BENCH_WORKER;
  options.build.runtime_include = default_runtime_include();
  options.build.work_dir = work_dir;
  const Target& target = kernel_build().target;
  return backend_for(target.kind).make_measurer(compiler, target, options);
}

Kernel load_kernel(const std::string& text, const std::string& name) {
  auto file = std::make_shared<SourceFile>();
  file->path = "bench.def";
  file->text = text;
  Program program = load_program(file);
  const Kernel* k = program.find(name);
  if (!k) throw std::runtime_error("no kernel " + name);
  return *k;
}

State tune_to_budget(const Kernel& kernel, Measurer& measurer, const TuningCache& cache, TuneOptions options) {
  RecordScope scope{std::make_shared<const ComputeDAG>(kernel.dag), measurer.target().to_string(), measurer.compiler().identity()};
  for (const Record& r : cache.load(scope.target).records)
    if (!r.remeasure && check_record(r, scope).state) --options.trials;
  options.trials = std::max(0, options.trials);
  TuneSummary summary = tune_kernel(kernel.name, scope.dag, measurer, cache, options, std::cout);
  if (!summary.best) throw std::runtime_error("no schedule of " + kernel.name + " could be measured");
  RecordCheck check = check_record(*summary.best, scope);
  if (!check.state) throw std::runtime_error("the best record of " + kernel.name + " does not replay: " + check.detail);
  return std::move(*check.state);
}

LoadedKernel::LoadedKernel(const std::string& kernel_name, const State& state, const std::string& work_dir) {
  BuildOptions options;
  options.work_dir = work_dir;
  options.runtime_include = default_runtime_include();
  options.timeout_seconds = 600;
  const CppGenerator cpp;
  // CPU kernels for the host (or the named CPU): its target, whose tensor features decide which
  // intrinsics the tuned schedules' tensorized loops call.
  Builder builder(kernel_build().compiler, kernel_build().target, cpp, options);
  BuildResult built = builder.build({Candidate{kernel_name, state, PlantedFault::None}})[0];
  if (built.error != MeasureError::None) throw std::runtime_error("the kernel did not build: " + built.message);
  handle_ = ::dlopen(built.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(::dlerror());
  info_ = static_cast<const ansor_kernel_info*>(::dlsym(handle_, (built.symbol + "_info").c_str()));
  if (!info_) throw std::runtime_error("no kernel in " + built.library);
}

LoadedKernel::~LoadedKernel() {
  if (handle_) ::dlclose(handle_);
}

int64_t elements(const ansor_tensor_info& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.shape[i];
  return n;
}

namespace {

// An f32 value as bf16, rounded to nearest even (as the generated kernels store it); the values
// here are finite.
uint16_t to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

// Element j of a buffer of `dtype`, as a double (exact for every dtype a kernel computes in but
// i64 beyond 2^53).
double element(ansor_dtype dtype, const void* data, size_t j) {
  switch (dtype) {
    case ANSOR_DTYPE_F32: return static_cast<const float*>(data)[j];
    case ANSOR_DTYPE_F64: return static_cast<const double*>(data)[j];
    case ANSOR_DTYPE_BF16: return std::bit_cast<float>(static_cast<uint32_t>(static_cast<const uint16_t*>(data)[j]) << 16);
    case ANSOR_DTYPE_I8: return static_cast<const int8_t*>(data)[j];
    case ANSOR_DTYPE_I16: return static_cast<const int16_t*>(data)[j];
    case ANSOR_DTYPE_I32: return static_cast<const int32_t*>(data)[j];
    case ANSOR_DTYPE_I64: return static_cast<double>(static_cast<const int64_t*>(data)[j]);
    case ANSOR_DTYPE_U8:
    case ANSOR_DTYPE_BOOL: return static_cast<const uint8_t*>(data)[j];
    case ANSOR_DTYPE_F16: break;
  }
  throw std::runtime_error("the benchmarks do not read f16 outputs");
}

// Random values of input `t` into `out` (sized for them, in t's dtype), the same for the same seed.
void fill_random(const ansor_tensor_info& t, unsigned seed, std::byte* out) {
  const size_t n = static_cast<size_t>(elements(t));
  if (t.dtype == ANSOR_DTYPE_U8 || t.dtype == ANSOR_DTYPE_I8) {
    std::mt19937 rng(seed);
    const bool is_signed = t.dtype == ANSOR_DTYPE_I8;
    std::uniform_int_distribution<int> dist(is_signed ? -128 : 0, is_signed ? 127 : 255);
    for (size_t j = 0; j < n; ++j) out[j] = static_cast<std::byte>(dist(rng));  // i8 as its two's complement byte
    return;
  }
  if (t.dtype != ANSOR_DTYPE_F32 && t.dtype != ANSOR_DTYPE_BF16)
    throw std::runtime_error(fmt::format("input {} is of a dtype the benchmarks do not fill (f32, bf16, u8 and i8 only)", t.name));
  std::vector<float> values = random_floats(n, seed);
  if (std::string_view(t.name) == "var")
    for (float& v : values) v = std::fabs(v);
  if (t.dtype == ANSOR_DTYPE_F32) {
    std::memcpy(out, values.data(), n * sizeof(float));
    return;
  }
  for (size_t j = 0; j < n; ++j) {
    const uint16_t bits = to_bf16(values[j]);
    std::memcpy(out + j * sizeof bits, &bits, sizeof bits);
  }
}

}  // namespace

KernelArguments::KernelArguments(const ansor_kernel_info& kernel) : plain(kernel.num_args), packed(kernel.num_args) {
  for (int i = 0; i < kernel.num_args; ++i) {
    const ansor_tensor_info& t = kernel.args[i];
    const size_t element_bytes = ansor_dtype_size(t.dtype);
    plain[i].resize(static_cast<size_t>(elements(t)) * element_bytes);
    if (!t.is_output) fill_random(t, 100 + i, plain[i].data());
    void* packed_ptr = plain[i].data();
    if (t.is_const) {
      has_const = true;
      packed[i].resize(static_cast<size_t>(kernel.packed_elements(i)) * element_bytes);
      kernel.pack(i, plain[i].data(), packed[i].data());
      packed_ptr = packed[i].data();
    }
    plain_ptrs.push_back(plain[i].data());
    packed_ptrs.push_back(packed_ptr);
  }
}

double argument_bytes(const ansor_kernel_info& kernel) {
  double bytes = 0;
  for (int i = 0; i < kernel.num_args; ++i)
    bytes += static_cast<double>(ansor_dtype_size(kernel.args[i].dtype)) * static_cast<double>(elements(kernel.args[i]));
  return bytes;
}

std::vector<const void*> KernelArguments::inputs() const {
  std::vector<const void*> in;
  for (size_t i = 0; i + 1 < plain.size(); ++i) in.push_back(plain[i].data());
  return in;
}

OutputChecker output_checker(const ansor_tensor_info& output, const void* ours, double tolerance) {
  const size_t n = static_cast<size_t>(elements(output));
  auto values = std::make_shared<std::vector<double>>(n);
  double largest = 0;
  for (size_t j = 0; j < n; ++j) {
    (*values)[j] = element(output.dtype, ours, j);
    largest = std::max(largest, std::fabs((*values)[j]));
  }
  return [values, dtype = output.dtype, tolerance, largest](const void* theirs) {
    OutputCheck c;
    for (size_t j = 0; j < values->size(); ++j) {
      const double got = element(dtype, theirs, j), want = (*values)[j];
      c.max_diff = std::max(c.max_diff, std::fabs(got - want));
      c.agrees = c.agrees && within_output_tolerance(got, want, tolerance, largest);
    }
    return c;
  };
}

double gflops(double flops, double seconds) { return flops / seconds / 1e9; }

}  // namespace ansor::bench
