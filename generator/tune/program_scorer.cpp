// The random scorer.
#include "tune/program_scorer.h"

namespace ansor {

std::vector<double> RandomScorer::score(const std::vector<State>& states) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> scores;
  scores.reserve(states.size());
  for (size_t i = 0; i < states.size(); ++i) scores.push_back(uniform(rng_));
  return scores;
}

}  // namespace ansor
