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
};

struct TuneSummary {
  int measured = 0;  // in this run
  int failed = 0;
  std::optional<Record> best;  // the fastest usable record of the kernel, old or new
  // The kernel's records found in the cache before this run, in the cache's order: their times
  // (+infinity for failures), so that a resumed run knows the tuning history.
  std::vector<double> earlier_seconds;
  std::optional<double> default_seconds;  // the default schedule's time, once measured (now or before)
  int transferred = 0;  // schedules mapped from other shapes' records measured in this run
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

  // Measures up to n new schedules (fewer when the budget has less left) and prints a progress
  // line. Returns how many were measured: 0 when the policy has no new schedule to offer.
  int run_round(int n, std::ostream& progress);

  bool budget_spent() const { return summary_.measured >= options_.trials; }
  int trials_left() const { return std::max(0, options_.trials - summary_.measured); }
  const TuneSummary& summary() const { return summary_; }
  const SearchPolicy& policy() const { return *policy_; }

 private:
  void load_known(const TuningCache& cache);
  void consider_best(const Record& r);
  // On the first round of a kernel without a usable record: the seeds mapped from other shapes.
  void find_seeds(std::ostream& progress);

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
};

// Rounds of options.batch_size until options.trials are measured or the policy runs out of new
// schedules; then a closing line.
TuneSummary tune_kernel(const std::string& kernel_name, std::shared_ptr<const ComputeDAG> dag, CandidateMeasurer& measurer,
                        const TuningCache& cache, const TuneOptions& options, std::ostream& progress,
                        std::function<std::shared_ptr<ProgramScorer>()> scorer = {});

}  // namespace ansor
