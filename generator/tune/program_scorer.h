// The seam between the search and a cost model: a ProgramScorer predicts which programs are
// fast, so that the evolutionary search measures few and good ones. The learned model
// (features and XGBoost) implements it; RandomScorer stands in while no model has learned
// enough. One scorer may serve every task of a tuning run (SearchTask::scorer).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tune/search_policy.h"

namespace ansor {

class ProgramScorer {
 public:
  virtual ~ProgramScorer() = default;
  // One score per state, higher for a program predicted faster. Scores rank the programs of
  // one task; the search uses nothing else of them.
  virtual std::vector<double> score(const std::vector<State>& states) = 0;
  // Learns from measured programs (failed ones too: their records say why).
  virtual void update(const std::vector<MeasuredCandidate>& measured) = 0;
  // Whether the scores carry information: false while they are random (no trained model), when
  // a search guided by them would only wander around the programs measured first.
  virtual bool informative() const { return true; }
};

// Scores drawn uniformly from [0, 1), new ones on every call; it learns nothing.
class RandomScorer final : public ProgramScorer {
 public:
  explicit RandomScorer(uint64_t seed) : rng_(seed) {}
  std::vector<double> score(const std::vector<State>& states) override;
  void update(const std::vector<MeasuredCandidate>&) override {}
  bool informative() const override { return false; }

 private:
  std::mt19937_64 rng_;
};

}  // namespace ansor
