// Kernel tuning tasks under the task scheduler.
#include "tune/kernel_scheduling.h"

#include <algorithm>
#include <limits>

#include "dag/computation_key.h"

namespace ansor {

double KernelSchedulerTask::best_seconds() const {
  const std::optional<Record>& best = task_.summary().best;
  return best ? best->seconds : std::numeric_limits<double>::infinity();
}

std::string structure_key(const ComputeDAG& dag) { return abstract_numbers(dag.canonical_text(), AbstractedNumbers::All); }

std::vector<double> round_history(const std::vector<double>& seconds, int batch) {
  std::vector<double> history;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < seconds.size(); ++i) {
    best = std::min(best, seconds[i]);
    if ((i + 1) % static_cast<size_t>(batch) == 0 || i + 1 == seconds.size()) history.push_back(best);
  }
  return history;
}

}  // namespace ansor
