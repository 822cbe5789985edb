// What the CLI needs to tune and to pick tuned schedules: the kernel compiler, the target, the
// cache, and (created on first use) the measurer. Emitting and tuning share it so that a build
// step that finds no record can tune and then emit with the same compiler and target.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "lang/program.h"
#include "measure/measurer.h"
#include "records/cache.h"
#include "records/record_filter.h"
#include "sampler/sampler_context.h"
#include "tune/tuner.h"

namespace ansor {

struct SessionOptions {
  std::string cache_dir;             // empty: no records
  std::string target = "host";
  std::string compiler;              // empty: clang++
  std::vector<std::string> flags;    // empty: the default kernel flags
  double min_seconds = 0.1;
  double early_stop_factor = 10;     // MeasureOptions::early_stop_factor; 0: never stop early
  std::string work_dir;              // empty: a fresh directory per target under the system's temp dir
};

class TuningSession {
 public:
  explicit TuningSession(SessionOptions options);
  // With the cache of options.cache_dir as `records` (a copy sharing the records another session
  // has read: a run reads each file once).
  TuningSession(SessionOptions options, TuningCache records);

  const KernelCompiler& compiler();
  const Target& target();
  // How the sampler sees the target (a host target without measuring needs no compiler run).
  SamplerContext sampler_context();
  // The k fastest usable records of the kernel (record_filter.h), fastest first; warnings
  // about skipped lines and records go to `notes`.
  std::vector<ReplayedRecord> best(const Kernel& kernel, size_t k, std::vector<std::string>& notes);
  TuneSummary tune(const Kernel& kernel, const TuneOptions& options, std::ostream& progress);
  // The kernel's tuning task over this session's cache, measurer and cost model, for a caller
  // that runs its rounds (the task scheduler). Same errors as tune().
  std::unique_ptr<TuningTask> task(const Kernel& kernel, const TuneOptions& options);
  // Why this machine cannot measure for the session's target (a GPU, or a CPU level whose
  // features this CPU lacks); empty when it can.
  const std::string& cannot_measure();

 private:
  Measurer& measurer();
  const TuningCache& cache();
  // The session's target, compiler and flags, as its backend takes them.
  KernelBuildRequest request() const;
  const Backend& backend();

  SessionOptions options_;
  const Backend* backend_ = nullptr;
  std::optional<KernelCompiler> compiler_;
  std::optional<Target> target_;
  std::unique_ptr<Measurer> measurer_;
  TuningCache records_;  // tasks keep a reference to it
  std::optional<std::string> cannot_measure_;
  // The cost model shared by the kernels tuned in this session (made when a policy first asks).
  std::function<std::shared_ptr<ProgramScorer>()> scorer_;
};

// The target a kernel is tuned and emitted for: its own `target` attribute, else the run's.
std::string kernel_target(const Kernel& kernel, const std::string& run_target);

// The sessions of a run whose kernels may name their own targets: one session per target, each
// made on first use, so that a kernel's records, sampler and measurer are those of its target.
class TuningSessions {
 public:
  explicit TuningSessions(SessionOptions options) : options_(std::move(options)), records_(options_.cache_dir) {}
  TuningSession& for_kernel(const Kernel& kernel);

 private:
  SessionOptions options_;
  TuningCache records_;  // shared by the sessions
  std::map<std::string, std::unique_ptr<TuningSession>> sessions_;
};

}  // namespace ansor
