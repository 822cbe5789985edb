// Random scores for the rounds before the learned model is trained.
#include "cost_model/random_cost_model.h"

namespace ansor {

std::vector<double> RandomCostModel::predict(const std::vector<ProgramRows>& programs) const {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> scores;
  scores.reserve(programs.size());
  for (size_t i = 0; i < programs.size(); ++i) scores.push_back(uniform(rng_));
  return scores;
}

}  // namespace ansor
