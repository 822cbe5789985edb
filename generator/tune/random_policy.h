// The random search policy (paper §4): programs sampled from the sketches of the derivation
// rules and annotated at random, each schedule proposed at most once.
#pragma once

#include <random>
#include <set>
#include <string>
#include <vector>

#include "sampler/annotation.h"
#include "tune/search_policy.h"

namespace ansor {

class RandomPolicy : public SearchPolicy {
 public:
  explicit RandomPolicy(const SearchTask& task);

  std::string_view name() const override { return "random"; }
  std::vector<State> propose(int n) override;
  void update(const std::vector<MeasuredCandidate>& measured) override;

 private:
  std::vector<Sketch> sketches_;
  Annotator annotator_;
  std::mt19937_64 rng_;
  std::set<std::string> seen_;  // signatures of schedules proposed or reported
};

}  // namespace ansor
