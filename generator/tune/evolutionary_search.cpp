// The generations of the evolutionary search.
#include "tune/evolutionary_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "sampler/program_builder.h"

namespace ansor {

namespace {

// Selection weights: linear in the score, the worst with 5 % of the range so that it may still
// be drawn; uniform when all scores are equal.
std::vector<double> fitness(const std::vector<double>& scores) {
  auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  double range = *hi - *lo;
  std::vector<double> w;
  for (double s : scores) w.push_back(range > 0 && std::isfinite(range) ? s - *lo + 0.05 * range : 1.0);
  return w;
}

}  // namespace

EvolutionarySearch::EvolutionarySearch(SamplerContext ctx, std::shared_ptr<const SketchCatalog> catalog, EvolutionParams params)
    : ctx_(ctx), catalog_(catalog), params_(params), annotator_(ctx), mutator_(ctx, catalog), crossover_(ctx, catalog) {}

bool EvolutionarySearch::admissible(const State& s) const { return !ctx_.gpu || within_gpu_limits(s, ctx_); }

std::vector<EvolutionarySearch::Individual> EvolutionarySearch::initial_population(const std::vector<State>& measured_best,
                                                                                  std::mt19937_64& rng) {
  const int size = params_.population;
  std::vector<Individual> population;
  std::set<std::string> signatures;
  const size_t seeds = std::min(measured_best.size(), static_cast<size_t>(std::lround(size * params_.measured_seed_ratio)));
  for (size_t i = 0; i < seeds; ++i) {
    std::string signature = measured_best[i].signature();
    if (signatures.insert(signature).second)
      population.push_back({measured_best[i], std::move(signature), catalog_->match(measured_best[i]).sketch, 0, false});
  }
  if (catalog_->sketches().empty()) return population;
  for (int draws = 0; static_cast<int>(population.size()) < size && draws < 2 * size; ++draws) {
    State s = sample_program(catalog_->sketches(), annotator_, rng);
    if (!admissible(s)) continue;
    std::string signature = s.signature();
    if (!signatures.insert(signature).second) continue;
    int sketch = catalog_->match(s).sketch;
    population.push_back({std::move(s), std::move(signature), sketch, 0, false});
  }
  return population;
}

std::vector<EvolutionarySearch::Individual> EvolutionarySearch::next_generation(const std::vector<Individual>& population,
                                                                               std::mt19937_64& rng) {
  std::vector<size_t> ranked(population.size());
  std::iota(ranked.begin(), ranked.end(), 0);
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t x, size_t y) { return population[x].score > population[y].score; });
  std::vector<Individual> next;
  std::set<std::string> signatures;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < params_.elites; ++i) {
    next.push_back(population[ranked[i]]);
    signatures.insert(population[ranked[i]].signature);
  }
  std::vector<double> scores;
  for (const Individual& ind : population) scores.push_back(ind.score);
  std::vector<double> weights = fitness(scores);
  std::discrete_distribution<size_t> select(weights.begin(), weights.end());
  // Crossover partners: programs of the same sketch, drawn by the same weights.
  std::map<int, std::vector<size_t>> by_sketch;
  for (size_t i = 0; i < population.size(); ++i)
    if (population[i].sketch >= 0) by_sketch[population[i].sketch].push_back(i);
  auto partner = [&](size_t parent) -> const Individual* {
    const std::vector<size_t>& group = by_sketch[population[parent].sketch];
    if (group.size() < 2) return nullptr;
    std::vector<double> w;
    for (size_t i : group) w.push_back(i == parent ? 0.0 : weights[i]);
    return &population[group[std::discrete_distribution<size_t>(w.begin(), w.end())(rng)]];
  };
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int size = params_.population;
  for (int attempts = 0; static_cast<int>(next.size()) < size && attempts < 4 * size; ++attempts) {
    const size_t p = select(rng);
    const Individual& parent = population[p];
    const double r = uniform(rng);
    std::optional<State> child;
    const Individual* other = r < params_.crossover_probability && parent.sketch >= 0 ? partner(p) : nullptr;
    if (other) {
      ++stats_.crossovers_tried;
      child = crossover_.cross(parent.state, other->state, rng);
      stats_.crossovers_made += child.has_value();
    }
    // Parents that cannot be crossed (a kernel of one node, say) give a mutation instead.
    const bool copy = !child && !other && r >= params_.crossover_probability + params_.mutation_probability;
    if (!child && !copy) {
      ++stats_.mutations_tried;
      child = mutator_.mutate(parent.state, rng);
      if (!child) continue;
      ++stats_.mutations_made;
    }
    if (copy) {
      if (signatures.insert(parent.signature).second) next.push_back(parent);
      continue;
    }
    std::string signature = child->signature();
    if (signatures.insert(signature).second) next.push_back({std::move(*child), std::move(signature), parent.sketch, 0, false});
  }
  return next;
}

std::vector<State> EvolutionarySearch::search(int n, const std::vector<State>& measured_best, ProgramScorer& scorer,
                                              const std::function<bool(const std::string&)>& excluded, std::mt19937_64& rng) {
  const auto start = std::chrono::steady_clock::now();
  stats_ = {};
  std::vector<Individual> population = initial_population(measured_best, rng);
  std::map<std::string, Individual> candidates;  // by signature: every program scored, not excluded
  for (int generation = 0;; ++generation) {
    // Programs kept from the last generation keep their scores; the others are scored together.
    std::vector<size_t> unscored;
    std::vector<State> states;
    for (size_t i = 0; i < population.size(); ++i) {
      if (population[i].scored) continue;
      unscored.push_back(i);
      states.push_back(population[i].state);
    }
    std::vector<double> scores = scorer.score(states);
    if (scores.size() != states.size())
      throw std::logic_error(fmt::format("the program scorer gave {} scores for {} programs", scores.size(), states.size()));
    stats_.scored += static_cast<int>(states.size());
    for (size_t j = 0; j < unscored.size(); ++j) {
      Individual& ind = population[unscored[j]];
      ind.score = scores[j];
      ind.scored = true;
      if (!excluded(ind.signature)) candidates.try_emplace(ind.signature, ind);
    }
    if (generation == params_.generations || population.empty()) break;
    population = next_generation(population, rng);
  }
  std::vector<const Individual*> ranked;
  for (const auto& [signature, ind] : candidates) ranked.push_back(&ind);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Individual* x, const Individual* y) { return x->score > y->score; });
  std::vector<State> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < n; ++i) out.push_back(ranked[i]->state);
  stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ansor
