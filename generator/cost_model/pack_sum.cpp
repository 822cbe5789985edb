// The pack-sum objective: sums of row predictions per program and their gradients.
#include "cost_model/pack_sum.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace ansor {

void PackedRows::add(const ProgramRows& program) {
  if (program.row_length != row_length || program.values.size() % static_cast<size_t>(row_length) != 0)
    throw std::invalid_argument(fmt::format("a program of {} values in rows of {}, expected rows of {}", program.values.size(),
                                            program.row_length, row_length));
  values.insert(values.end(), program.values.begin(), program.values.end());
  offsets.push_back(offsets.back() + static_cast<size_t>(program.rows()));
}

std::vector<double> pack_sums(std::span<const float> row_predictions, std::span<const size_t> offsets) {
  std::vector<double> sums(offsets.size() - 1, 0.0);
  for (size_t p = 0; p + 1 < offsets.size(); ++p)
    for (size_t r = offsets[p]; r < offsets[p + 1]; ++r) sums[p] += row_predictions[r];
  return sums;
}

PackSumGradients pack_sum_squared_error(std::span<const float> row_predictions, std::span<const size_t> offsets,
                                        std::span<const double> labels, std::span<const double> weights) {
  std::vector<double> sums = pack_sums(row_predictions, offsets);
  PackSumGradients g;
  g.gradient.resize(row_predictions.size());
  g.hessian.resize(row_predictions.size());
  for (size_t p = 0; p < sums.size(); ++p) {
    auto gradient = static_cast<float>(weights[p] * (sums[p] - labels[p]));
    auto hessian = static_cast<float>(weights[p]);
    for (size_t r = offsets[p]; r < offsets[p + 1]; ++r) {
      g.gradient[r] = gradient;
      g.hessian[r] = hessian;
    }
  }
  return g;
}

double pack_sum_weighted_rmse(std::span<const double> sums, std::span<const double> labels, std::span<const double> weights) {
  double error = 0, total = 0;
  for (size_t p = 0; p < sums.size(); ++p) {
    error += weights[p] * (sums[p] - labels[p]) * (sums[p] - labels[p]);
    total += weights[p];
  }
  return total > 0 ? std::sqrt(error / total) : 0.0;
}

}  // namespace ansor
