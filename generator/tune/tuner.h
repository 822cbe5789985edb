// Tuning one kernel: rounds in which its search policy proposes schedules, the measurer measures
// them, every record is appended to the cache as soon as it is measured (an interrupted run
// loses none of its finished records), the policy learns the results, and a progress line is
// printed.
//
// A TuningTask is one kernel's state between rounds, so that a task scheduler can interleave
// the rounds of several kernels; tune_kernel runs one task's rounds until its budget is spent.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "measure/candidate_measurer.h"
#include "records/cache.h"
#include "tune/search_policy.h"

namespace ansor {

struct TuneOptions {
  int trials = 64;
  int batch_size = 16;
  uint64_t seed = 0;
  std::string policy = "ansor";  // a name of search_policy_names()
  // The trials come from a budget shared by several kernels (the task scheduler's): progress
  // lines count this kernel's trials without a per-kernel budget.
  bool shared_budget = false;
  // A kernel with no usable record of its own for the target first measures up to this many
  // schedules of the same computation at other shapes (records/record_transfer.h), which seed
  // its search; 0: none.
  int transfer_seeds = 12;
  // At the end of a run that measured anything, the kernel's fastest schedules are measured
  // again, in turn, until each of the first `confirm_schedules` has `confirm_measurements`
  // measurements; a schedule counts at the median of its measurements. On a shared machine one
  // measurement of a schedule can be 10-20 % off, and the fastest of hundreds of single
  // measurements is often the luckiest. These measurements are not trials. Off by default: on
  // four kernels of bench/shapes.def the confirmed choice was no faster in the benchmark
  // (docs/search.md).
  int confirm_schedules = 0;
  int confirm_measurements = 3;
};

struct TuneSummary {
  int measured = 0;  // in this run
  int failed = 0;
  int remeasured = 0;  // confirmation measurements in this run (not trials)
  // The first record of the kernel's fastest schedule, old or new, with the median of its
  // measurements as its time.
  std::optional<Record> best;
  // The kernel's trials found in the cache before this run, in the cache's order: their times
  // (+infinity for failures), so that a resumed run knows the tuning history.
  std::vector<double> earlier_seconds;
  std::optional<double> default_seconds;  // the default schedule's time, once measured (now or before)
  int transferred = 0;  // schedules mapped from other shapes' records measured in this run
  // Proposed schedules that lowered to a program measured before (their records copy that
  // measurement): not trials, not in the cache.
  int copies = 0;
};

class TuningTask {
 public:
  // Makes the policy of the search task of kernel `kernel_name` over `dag` on the measurer's
  // target (std::invalid_argument for an unknown policy) and hands it what the cache already
  // holds for the kernel on the measurer's target and compiler. A policy that uses a cost model
  // gets it from `scorer` (tasks sharing a source share the model); with none, from a learned
  // scorer of its own over the cache. The measurer and the cache must outlive the task.
  TuningTask(std::string kernel_name, std::shared_ptr<const ComputeDAG> dag, CandidateMeasurer& measurer, const TuningCache& cache,
             TuneOptions options, std::function<std::shared_ptr<ProgramScorer>()> scorer = {});
  // Its policy asks it which schedules repeat a measured program (SearchTask::new_program).
  TuningTask(const TuningTask&) = delete;
  TuningTask& operator=(const TuningTask&) = delete;

  // Measures up to n new programs (fewer when the budget has less left) and prints a progress
  // line. Returns how many were measured: 0 when the policy has no new schedule to offer, or
  // offers only schedules of programs measured before. Those get a copy of the earlier
  // measurement (Record::copied), which is no trial and is not written to the cache.
  int run_round(int n, std::ostream& progress);

  // Measures the fastest schedules again (TuneOptions::confirm_schedules) when this run measured
  // anything, prints a line, and returns how many measurements it made.
  int confirm_best(std::ostream& progress);

  bool budget_spent() const { return summary_.measured >= options_.trials; }
  int trials_left() const { return std::max(0, options_.trials - summary_.measured); }
  const TuneSummary& summary() const { return summary_; }
  const SearchPolicy& policy() const { return *policy_; }

 private:
  // A schedule's successful measurements, in this run and in the cache.
  struct MeasuredSchedule {
    State state;
    Record first;
    std::vector<double> seconds;
  };

  void load_known(const TuningCache& cache);
  void note_time(const Record& r, const State& state);  // a successful measurement
  void choose_best();
  std::vector<const MeasuredSchedule*> fastest_schedules() const;  // by the median of their times
  // On the first round of a kernel without a usable record: the seeds mapped from other shapes.
  void find_seeds(std::ostream& progress);
  // Up to `wanted` schedules to measure: the default schedule and the seeds while they wait,
  // then the policy's proposals. Adds the policy's time to search_seconds.
  std::vector<State> next_batch(int wanted, double& search_seconds);

  // Copies of earlier measurements a round accepts per trial it wants before it gives up.
  static constexpr int kCopiesPerTrial = 4;

  SearchTask task_;
  CandidateMeasurer& measurer_;
  const TuningCache& cache_;
  TuneOptions options_;
  std::unique_ptr<SearchPolicy> policy_;
  TuneSummary summary_;
  int rounds_ = 0;
  double seconds_ = 0;  // spent in this task's rounds
  std::optional<State> default_schedule_;  // until it is measured (or found in the cache)
  bool seeds_looked_for_ = false;
  std::vector<State> seeds_;  // mapped from other shapes, until measured
  std::map<std::string, MeasuredSchedule> schedules_;  // by schedule_key
};

// Rounds of options.batch_size until options.trials are measured or the policy runs out of new
// schedules; then the confirmation of the fastest and a closing line.
TuneSummary tune_kernel(const std::string& kernel_name, std::shared_ptr<const ComputeDAG> dag, CandidateMeasurer& measurer,
                        const TuningCache& cache, const TuneOptions& options, std::ostream& progress,
                        std::function<std::shared_ptr<ProgramScorer>()> scorer = {});

}  // namespace ansor
