// The Ansor search policy (paper §5): each round, an evolutionary search guided by the task's
// program scorer proposes the programs predicted fastest; a share ε of the batch is sampled at
// random instead (ε-greedy), so that programs the model undervalues still get measured. No
// program is proposed twice, nor one measured before (the cache's records included), nor one
// that lowers to the same program as one measured before or another of its batch
// (SearchTask::new_program). Measured
// results teach the scorer, and the fastest measured programs seed the next population.
#pragma once

#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tune/evolutionary_search.h"
#include "tune/search_policy.h"

namespace ansor {

class AnsorPolicy : public SearchPolicy {
 public:
  AnsorPolicy(const SearchTask& task, EvolutionParams params = {}, std::string name = "ansor");

  std::string_view name() const override { return name_; }
  std::vector<State> propose(int n) override;
  void update(const std::vector<MeasuredCandidate>& measured) override;

  const EvolutionarySearch& search() const { return search_; }

 private:
  std::string name_;
  std::shared_ptr<const SketchCatalog> catalog_;
  Annotator annotator_;
  EvolutionarySearch search_;
  std::shared_ptr<ProgramScorer> scorer_;
  std::mt19937_64 rng_;
  std::function<std::optional<std::string>(const State&)> new_program_;
  std::set<std::string> seen_;                      // signatures proposed or reported
  std::vector<std::pair<double, State>> measured_;  // the fastest measured, by seconds
};

}  // namespace ansor
