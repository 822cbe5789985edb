// Evolutionary proposals with ε-greedy random samples.
#include "tune/ansor_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ansor {

namespace {

// Draws per wanted random sample before concluding that a small space has no new ones left.
constexpr int kDrawsPerSample = 50;
// Keeps the random scorer's draws apart from the policy's own, which use the task's seed.
constexpr uint64_t kScorerSeedSalt = 0x9e3779b97f4a7c15ULL;

}  // namespace

AnsorPolicy::AnsorPolicy(const SearchTask& task, EvolutionParams params, std::string name)
    : name_(std::move(name)),
      catalog_(std::make_shared<const SketchCatalog>(generate_sketches(task.dag, task.sampler, SketchRules::for_context(task.sampler)))),
      annotator_(task.sampler),
      search_(task.sampler, catalog_, params),
      scorer_(task.scorer ? task.scorer() : std::make_shared<RandomScorer>(task.seed ^ kScorerSeedSalt)),
      rng_(task.seed) {}

std::vector<State> AnsorPolicy::propose(int n) {
  if (n <= 0) return {};
  // ε·n random samples, the fraction drawn: small batches get one now and then.
  double random_share = search_.params().eps_greedy * n;
  int random = static_cast<int>(random_share) + (std::bernoulli_distribution(random_share - std::floor(random_share))(rng_) ? 1 : 0);
  // Until the scorer is trained (too few measured programs, and none in the cache to transfer
  // from), the whole batch is sampled at random, as TVM's policy does with a random model: the
  // evolution would only rewrite the first programs measured. Seen on a 56x56, 64-channel conv
  // on Zen 4: random sampling found 215 GFLOP/s in 32 trials, evolving with random scores
  // 89 GFLOP/s in 128.
  if (!scorer_->informative()) random = n;
  std::vector<State> out;
  if (n > random) {
    std::vector<State> seeds;
    for (const auto& [seconds, state] : measured_) seeds.push_back(state);
    auto seen = [&](const std::string& signature) { return seen_.count(signature) > 0; };
    for (State& s : search_.search(n - random, seeds, *scorer_, seen, rng_))
      if (seen_.insert(s.signature()).second) out.push_back(std::move(s));
  }
  const std::vector<Sketch>& sketches = catalog_->sketches();
  for (int draws = 0; !sketches.empty() && static_cast<int>(out.size()) < n && draws < n * kDrawsPerSample; ++draws) {
    State s = sample_program(sketches, annotator_, rng_);
    if (seen_.insert(s.signature()).second) out.push_back(std::move(s));
  }
  return out;
}

void AnsorPolicy::update(const std::vector<MeasuredCandidate>& measured) {
  scorer_->update(measured);
  for (const MeasuredCandidate& m : measured) {
    seen_.insert(m.state.signature());
    if (m.record.ok() && m.record.seconds > 0) measured_.emplace_back(m.record.seconds, m.state);
  }
  std::stable_sort(measured_.begin(), measured_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Enough to seed any population: the search takes a share of its population from these.
  const size_t keep = static_cast<size_t>(std::max(1, search_.params().population));
  if (measured_.size() > keep) measured_.erase(measured_.begin() + static_cast<long>(keep), measured_.end());
}

}  // namespace ansor
