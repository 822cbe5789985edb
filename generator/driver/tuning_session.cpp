// Lazily created compiler, target and measurer, and record lookups.
#include "driver/tuning_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "measure/cpu_variant.h"
#include "measure/cuda_device.h"
#include "measure/host_target.h"
#include "support/file_name.h"
#include "tune/learned_scorer.h"

namespace ansor {

TuningSession::TuningSession(SessionOptions options) : TuningSession(options, TuningCache(options.cache_dir)) {}

TuningSession::TuningSession(SessionOptions options, TuningCache records) : options_(std::move(options)), records_(std::move(records)) {}

std::vector<std::string> TuningSession::kernel_flags() const { return options_.flags.empty() ? default_kernel_flags() : options_.flags; }

const KernelCompiler& TuningSession::compiler() {
  if (compiler_) return *compiler_;
  if (is_cuda_target(options_.target)) {
    const std::string nvcc = options_.compiler.empty() ? find_nvcc() : options_.compiler;
    if (nvcc.empty()) throw std::runtime_error("no CUDA compiler (nvcc) found for " + options_.target + ": set ANSOR_NVCC or CUDACXX");
    compiler_ = make_kernel_compiler(nvcc, options_.flags.empty() ? cuda_kernel_flags(target()) : options_.flags);
  } else {
    // A named CPU level builds with its own -march, never the host's (measure/cpu_variant.h).
    compiler_ = make_kernel_compiler(options_.compiler, flags_for_cpu(kernel_flags(), options_.target));
  }
  return *compiler_;
}

const Target& TuningSession::target() {
  if (!target_) target_ = is_cuda_target(options_.target) ? resolve_cuda_target(options_.target) : resolve_target(options_.target, compiler());
  return *target_;
}

SamplerContext TuningSession::sampler_context() { return SamplerContext::for_target(target()); }

Measurer& TuningSession::measurer() {
  if (!measurer_) {
    MeasureOptions m;
    m.min_seconds = options_.min_seconds;
    m.early_stop_factor = options_.early_stop_factor;
    m.worker_path = default_worker_path();
    m.build.runtime_include = default_runtime_include();
    // CUDA candidates are compiled by the host's cores (nvcc takes seconds per candidate).
    const int build_cores = target().kind == Target::Kind::Cuda ? static_cast<int>(std::thread::hardware_concurrency()) : target().cores;
    m.build.parallel = std::max(1, build_cores);
    m.build.work_dir = options_.work_dir.empty()
                           ? (std::filesystem::temp_directory_path() /
                              fmt::format("ansor-tune-{}-{}", ::getpid(), file_name_stem(options_.target)))
                                 .string()
                           : options_.work_dir;
    measurer_ = std::make_unique<Measurer>(compiler(), target(), m);
  }
  return *measurer_;
}

std::vector<ReplayedRecord> TuningSession::best(const Kernel& kernel, size_t k, std::vector<std::string>& notes) {
  if (options_.cache_dir.empty()) return {};
  RecordScope scope{std::make_shared<const ComputeDAG>(kernel.dag), target().to_string(), compiler().identity()};
  return best_records(records_, scope, kernel.name, k, notes);
}

const std::string& TuningSession::cannot_measure() {
  if (cannot_measure_) return *cannot_measure_;
  cannot_measure_ = "";
  if (target().kind == Target::Kind::Cuda) {
    std::string why;
    std::optional<CudaDevice> device = probe_cuda_device(compiler().path, why);
    if (!device) {
      cannot_measure_ = fmt::format("tuning for {} measures on a GPU of that architecture: {}", target().to_string(), why);
    } else if (device->target.cpu != target().cpu) {
      cannot_measure_ = fmt::format("tuning for {} measures on a GPU of that architecture: the one here is {} ({})", target().to_string(),
                                    device->name, device->target.cpu);
    }
  } else if (is_cpu_name(options_.target)) {
    KernelCompiler native = make_kernel_compiler(options_.compiler, kernel_flags());
    std::vector<std::string> missing = missing_features(cpu_features(compiler()), cpu_features(native));
    if (!missing.empty())
      cannot_measure_ = fmt::format("tuning for {} needs a CPU that runs its code: this one lacks {}", options_.target, fmt::join(missing, ", "));
  }
  return *cannot_measure_;
}

const TuningCache& TuningSession::cache() {
  if (options_.cache_dir.empty()) throw std::runtime_error("tuning needs a cache directory (--cache) to keep its records");
  if (!cannot_measure().empty()) throw std::runtime_error(cannot_measure());
  return records_;
}

TuneSummary TuningSession::tune(const Kernel& kernel, const TuneOptions& options, std::ostream& progress) {
  const TuningCache& records = cache();
  if (!scorer_) scorer_ = learned_scorer_source(records, target().to_string(), options.seed);
  return tune_kernel(kernel.name, std::make_shared<const ComputeDAG>(kernel.dag), measurer(), records, options, progress, scorer_);
}

std::unique_ptr<TuningTask> TuningSession::task(const Kernel& kernel, const TuneOptions& options) {
  const TuningCache& records = cache();
  if (!scorer_) scorer_ = learned_scorer_source(records, target().to_string(), options.seed);
  return std::make_unique<TuningTask>(kernel.name, std::make_shared<const ComputeDAG>(kernel.dag), measurer(), records, options, scorer_);
}

std::string kernel_target(const Kernel& kernel, const std::string& run_target) { return kernel.attrs.target.value_or(run_target); }

TuningSession& TuningSessions::for_kernel(const Kernel& kernel) {
  std::string target = kernel_target(kernel, options_.target);
  std::unique_ptr<TuningSession>& session = sessions_[target];
  if (!session) {
    SessionOptions options = options_;
    options.target = target;
    // Each session's measurer owns (and removes) its work directory.
    if (!options.work_dir.empty() && target != options_.target) options.work_dir += "-" + file_name_stem(target);
    session = std::make_unique<TuningSession>(std::move(options), records_);
  }
  return *session;
}

}  // namespace ansor
