// Rows of programs and the per-workload normalisation of measured times.
#include "cost_model/cost_model.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace ansor {

void ProgramRows::add_row(std::span<const float> row) {
  if (row_length <= 0 || static_cast<int>(row.size()) != row_length)
    throw std::invalid_argument(fmt::format("ProgramRows: a row of {} features, expected {}", row.size(), row_length));
  values.insert(values.end(), row.begin(), row.end());
}

std::vector<double> normalized_throughputs(const std::vector<TrainingProgram>& programs) {
  std::map<std::string, double> best;
  for (size_t i = 0; i < programs.size(); ++i) {
    double s = programs[i].seconds;
    if (!std::isfinite(s) || s <= 0)
      throw std::invalid_argument(
          fmt::format("training program {} (workload {}) has {} seconds; expected a positive time", i, programs[i].workload, s));
    auto [it, inserted] = best.emplace(programs[i].workload, s);
    if (!inserted && s < it->second) it->second = s;
  }
  std::vector<double> y;
  y.reserve(programs.size());
  for (const TrainingProgram& p : programs) y.push_back(best.at(p.workload) / p.seconds);
  return y;
}

}  // namespace ansor
