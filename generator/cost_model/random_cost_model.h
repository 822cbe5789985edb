// The cost model of the search's first rounds: uniform random scores from a seeded generator,
// used while the learned model has too few measured programs to be trained (as TVM does), so
// that the search picks among candidates without bias.
#pragma once

#include <cstdint>
#include <random>

#include "cost_model/cost_model.h"

namespace ansor {

class RandomCostModel final : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed) : rng_(seed) {}

  // Nothing to learn.
  void train(const std::vector<TrainingProgram>&) override {}
  // Scores uniform in [0, 1), drawn in program order: the same seed gives the same sequence.
  std::vector<double> predict(const std::vector<ProgramRows>& programs) const override;
  // Always: random scores need no data.
  bool trained() const override { return true; }

 private:
  mutable std::mt19937_64 rng_;
};

}  // namespace ansor
