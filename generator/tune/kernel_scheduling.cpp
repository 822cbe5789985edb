// Kernel tuning tasks under the task scheduler.
#include "tune/kernel_scheduling.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace ansor {

double KernelSchedulerTask::best_seconds() const {
  const std::optional<Record>& best = task_.summary().best;
  return best ? best->seconds : std::numeric_limits<double>::infinity();
}

std::string structure_key(const ComputeDAG& dag) {
  const std::string& text = dag.canonical_text();
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string key;
  for (size_t i = 0; i < text.size(); ++i) {
    // A number (not the digits of a name such as T0 or f32), with its fraction and exponent,
    // becomes '#'.
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && word_char(text[i - 1]))) {
      key += text[i];
      continue;
    }
    while (i + 1 < text.size() && (word_char(text[i + 1]) || text[i + 1] == '.' ||
                                   ((text[i + 1] == '-' || text[i + 1] == '+') && (text[i] == 'e' || text[i] == 'E'))))
      ++i;
    key += '#';
  }
  return key;
}

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
