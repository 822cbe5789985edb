// What the task scheduler needs to drive kernel tuning: a TuningTask as a SchedulerTask, the key
// that groups alike kernels (the paper's similar tasks), and the round history of a task whose
// earlier trials are in the cache, so that a restarted run resumes instead of starting over.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "tune/task_scheduler.h"
#include "tune/tuner.h"

namespace ansor {

class KernelSchedulerTask : public SchedulerTask {
 public:
  // The task and the stream must outlive this object.
  KernelSchedulerTask(TuningTask& task, double flop_count, std::ostream& progress)
      : task_(task), flop_count_(flop_count), progress_(progress) {}
  int run_round(int n) override { return task_.run_round(n, progress_); }
  double best_seconds() const override;
  double flop_count() const override { return flop_count_; }

 private:
  TuningTask& task_;
  double flop_count_;
  std::ostream& progress_;
};

// The computation without its sizes: the DAG's canonical text with every number replaced, so
// that two kernels differing only in extents and constants (two conv2d layers of a network)
// share a key.
std::string structure_key(const ComputeDAG& dag);

// The best time after each round of `batch` trials, given the trials' times in order (+infinity
// for failures); a last, partial round counts as a round.
std::vector<double> round_history(const std::vector<double>& seconds, int batch);

}  // namespace ansor
