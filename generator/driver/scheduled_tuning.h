// `ansor-gen tune DEF` without --kernel: every kernel of the file tuned under one budget, the
// task scheduler (tune/task_scheduler.h) giving each round to the kernel where it promises the
// most for the file's networks. The budget counts the trials already in the cache, so a run
// that was interrupted, or is started again with a larger budget, continues where the records
// end instead of starting over.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "driver/tuning_session.h"
#include "lang/program.h"
#include "tune/task_scheduler.h"
#include "tune/tuner.h"

namespace ansor {

struct ScheduledTuningOptions {
  TuneOptions tune;  // policy, batch size and seed of every kernel's search
  TaskSchedulerOptions scheduler;
  int total_trials = 0;  // for all the kernels together, trials in the cache included
};

// One kernel's outcome, for the closing table.
struct ScheduledKernel {
  std::string name;
  double weight = 1;  // the sum of its counts over the networks (its `weight` without networks)
  double flops = 0;
  int earlier_trials = 0, trials = 0;  // from the cache, and measured by this run
  std::optional<double> best_seconds, default_seconds;
  std::string skipped;  // why it was not tuned (a GPU target on this machine)
};

// Tunes the program's kernels. Throws std::invalid_argument for options the networks cannot
// serve (f3 without reference latencies), std::runtime_error when a kernel cannot be tuned.
std::vector<ScheduledKernel> tune_scheduled(const Program& program, TuningSessions& sessions, const ScheduledTuningOptions& options,
                                            std::ostream& progress);

// The closing table: kernel, weight, GFLOP/s, speed-up over the default schedule, trials; nothing
// when no kernel was tuned (tune_scheduled said why).
void print_scheduled_summary(const std::vector<ScheduledKernel>& kernels, std::ostream& out);

}  // namespace ansor
