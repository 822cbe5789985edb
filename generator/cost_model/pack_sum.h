// Pack-sum (paper §5.2): the model predicts a score per row (statement) and a program's score is
// the sum of its rows' scores. XGBoost knows nothing of programs, so the loss over programs and
// its per-row gradients are computed here and handed to the booster one round at a time.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "cost_model/cost_model.h"

namespace ansor {

// Programs stacked into one row-major matrix: program p owns rows [offsets[p], offsets[p + 1]).
struct PackedRows {
  int row_length = 0;
  std::vector<float> values;
  std::vector<size_t> offsets{0};

  size_t rows() const { return offsets.back(); }
  size_t programs() const { return offsets.size() - 1; }
  // Appends a program; its row length must be row_length. Throws std::invalid_argument.
  void add(const ProgramRows& program);
};

// The score of each program: the sum of its rows' predictions.
std::vector<double> pack_sums(std::span<const float> row_predictions, std::span<const size_t> offsets);

struct PackSumGradients {
  std::vector<float> gradient, hessian;  // one per row
};

// The weighted squared error of the packed sums, sum over programs of w_p (s_p - y_p)^2 / 2,
// differentiated by each row's prediction: every row of program p gets gradient
// w_p (s_p - y_p) and hessian w_p.
PackSumGradients pack_sum_squared_error(std::span<const float> row_predictions, std::span<const size_t> offsets,
                                        std::span<const double> labels, std::span<const double> weights);

// sqrt(sum w_p (s_p - y_p)^2 / sum w_p): the loss above as an error in score units, for early
// stopping. 0 when the weights sum to 0.
double pack_sum_weighted_rmse(std::span<const double> sums, std::span<const double> labels, std::span<const double> weights);

}  // namespace ansor
