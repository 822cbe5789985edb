// Evolutionary search (paper §5.1): a population of complete programs, scored by a cost model,
// evolves for a few generations by fitness-proportional selection, mutation and node-based
// crossover; the best-scored programs not measured yet are what the policy measures next.
//
// The initial population is the best measured programs (a share of it) and fresh random
// samples. Each generation keeps its best programs unchanged (elitism), then fills up with
// children: crossover of two parents of the same sketch, else a mutation of one parent, else a
// copy of it, parents drawn with probability growing linearly with their score (the worst of
// the generation has a small floor of chance). A population holds no program twice. Every
// program scored on the way, in any generation, is a candidate for the result unless it is
// excluded (measured or proposed before).
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sampler/annotation.h"
#include "sampler/crossover.h"
#include "sampler/mutation.h"
#include "tune/program_scorer.h"

namespace ansor {

// Defaults sized for a 2-core machine: a round's search costs seconds (docs/search.md has the
// figures). TVM's Ansor uses a population of 2048; ours trades breadth for rounds that a
// user's build can afford.
struct EvolutionParams {
  int population = 512;                 // docs/search.md: what 256 and 2048 cost
  int generations = 4;
  double crossover_probability = 0.15;  // of a child: crossover (0 switches it off)
  double mutation_probability = 0.8;    // else a mutation; the rest copy a parent
  int elites = 8;                       // best programs kept unchanged per generation
  double measured_seed_ratio = 0.2;     // share of the initial population from the best measured
  double eps_greedy = 0.05;             // share of each batch the policy samples at random
};

// What one search did, for progress reports and tests.
struct EvolutionStats {
  int scored = 0;
  int mutations_tried = 0, mutations_made = 0;
  int crossovers_tried = 0, crossovers_made = 0;
  double seconds = 0;
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(SamplerContext ctx, std::shared_ptr<const SketchCatalog> catalog, EvolutionParams params);

  // Up to n programs, best predicted first, none of them excluded. `measured_best` lists
  // measured programs, fastest first, to seed the population with.
  std::vector<State> search(int n, const std::vector<State>& measured_best, ProgramScorer& scorer,
                            const std::function<bool(const std::string& signature)>& excluded, std::mt19937_64& rng);

  const EvolutionParams& params() const { return params_; }
  const EvolutionStats& last_stats() const { return stats_; }

 private:
  struct Individual {
    State state;
    std::string signature;
    int sketch = -1;
    double score = 0;
    bool scored = false;
  };
  std::vector<Individual> initial_population(const std::vector<State>& measured_best, std::mt19937_64& rng);
  std::vector<Individual> next_generation(const std::vector<Individual>& population, std::mt19937_64& rng);
  bool admissible(const State& s) const;

  SamplerContext ctx_;
  std::shared_ptr<const SketchCatalog> catalog_;
  EvolutionParams params_;
  Annotator annotator_;
  Mutator mutator_;
  Crossover crossover_;
  EvolutionStats stats_;
};

}  // namespace ansor
