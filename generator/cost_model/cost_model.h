// The learned cost model's interface (paper §5.2): it scores candidate programs so that the
// search measures only the promising ones. A program reaches the model as rows of features, one
// row per statement (innermost store) of its lowered loop program; the model is generic over the
// row length, so the feature extractor can change without touching the model.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace ansor {

// A program as the model sees it: rows() rows of row_length features, row-major.
struct ProgramRows {
  int row_length = 0;
  std::vector<float> values;

  ProgramRows() = default;
  explicit ProgramRows(int length) : row_length(length) {}

  int rows() const { return row_length > 0 ? static_cast<int>(values.size()) / row_length : 0; }
  std::span<const float> row(int i) const {
    return {values.data() + static_cast<size_t>(i) * row_length, static_cast<size_t>(row_length)};
  }
  // Appends a row; its length must be row_length.
  void add_row(std::span<const float> row);
};

// A measured program: its workload (programs are compared only within one), its rows and the
// median seconds of one call.
struct TrainingProgram {
  std::string workload;
  ProgramRows rows;
  double seconds = 0;
};

// Scores programs; a higher score means a faster program. Scores of programs of one workload
// compare; across workloads they mean nothing.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Trains from scratch on every program given (earlier training is discarded).
  virtual void train(const std::vector<TrainingProgram>& programs) = 0;
  // One score per program. Only valid when trained().
  virtual std::vector<double> predict(const std::vector<ProgramRows>& programs) const = 0;
  // Whether predict() means something: false until train() saw enough programs.
  virtual bool trained() const = 0;
};

// The throughput of each program relative to the fastest program of its workload, in (0, 1]:
// best seconds of the workload / seconds. Throws std::invalid_argument naming the first program
// whose seconds are not a positive finite number.
std::vector<double> normalized_throughputs(const std::vector<TrainingProgram>& programs);

}  // namespace ansor
