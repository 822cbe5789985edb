// Lazily created compiler, target and measurer, and record lookups.
#include "driver/tuning_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "backend/backend_registry.h"
#include "support/file_name.h"
#include "tune/learned_scorer.h"

namespace ansor {

TuningSession::TuningSession(SessionOptions options) : TuningSession(options, TuningCache(options.cache_dir)) {}

TuningSession::TuningSession(SessionOptions options, TuningCache records) : options_(std::move(options)), records_(std::move(records)) {}

KernelBuildRequest TuningSession::request() const { return {options_.target, options_.compiler, options_.flags}; }

const Backend& TuningSession::backend() {
  if (!backend_) backend_ = &backend_named(options_.target);
  return *backend_;
}

const KernelCompiler& TuningSession::compiler() {
  if (!compiler_) compiler_ = backend().kernel_compiler(request());
  return *compiler_;
}

const Target& TuningSession::target() {
  if (!target_) target_ = backend().resolve_target(request(), [this]() -> const KernelCompiler& { return compiler(); });
  return *target_;
}

SamplerContext TuningSession::sampler_context() { return backend().sampler_context(target()); }

Measurer& TuningSession::measurer() {
  if (!measurer_) {
    MeasureOptions m;
    m.min_seconds = options_.min_seconds;
    m.early_stop_factor = options_.early_stop_factor;
    m.reuse_programs = true;
    m.worker_path = default_worker_path();
    m.build.runtime_include = default_runtime_include();
    m.build.parallel = std::max(1, backend().build_parallelism(target()));
    m.build.work_dir = options_.work_dir.empty()
                           ? (std::filesystem::temp_directory_path() /
                              fmt::format("ansor-tune-{}-{}", ::getpid(), file_name_stem(options_.target)))
                                 .string()
                           : options_.work_dir;
    measurer_ = backend().make_measurer(compiler(), target(), m);
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
  cannot_measure_ = backend().cannot_measure(request(), target(), compiler());
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
