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
// Ranked candidates the search returns per program wanted: its best may lower to programs
// measured before, which are passed over.
constexpr int kRankedPerWanted = 4;

}  // namespace

AnsorPolicy::AnsorPolicy(const SearchTask& task, EvolutionParams params, std::string name)
    : name_(std::move(name)),
      catalog_(std::make_shared<const SketchCatalog>(generate_sketches(task.dag, task.sampler, SketchRules::for_context(task.sampler)))),
      annotator_(task.sampler),
      search_(task.sampler, catalog_, params),
      scorer_(task.scorer ? task.scorer() : std::make_shared<RandomScorer>(task.seed ^ kScorerSeedSalt)),
      rng_(task.seed),
      new_program_(task.new_program) {}

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
  // A program whose measurement would be a copy (of an earlier one, or of another in the batch)
  // teaches nothing: it is passed over, and its schedule never proposed. Ranked candidates
  // beyond those wanted stay unseen for later rounds.
  std::set<std::string> batch_programs;
  auto take = [&](State& s) {
    if (seen_.count(s.signature())) return;
    std::optional<std::string> program = new_program_ ? new_program_(s) : std::string();
    seen_.insert(s.signature());
    if (!program || (!program->empty() && !batch_programs.insert(*program).second)) return;
    out.push_back(std::move(s));
  };
  if (n > random) {
    std::vector<State> seeds;
    for (const auto& [seconds, state] : measured_) seeds.push_back(state);
    auto seen = [&](const std::string& signature) { return seen_.count(signature) > 0; };
    for (State& s : search_.search(kRankedPerWanted * (n - random), seeds, *scorer_, seen, rng_)) {
      if (static_cast<int>(out.size()) >= n - random) break;
      take(s);
    }
  }
  const std::vector<Sketch>& sketches = catalog_->sketches();
  for (int draws = 0; !sketches.empty() && static_cast<int>(out.size()) < n && draws < n * kDrawsPerSample; ++draws) {
    State s = sample_program(sketches, annotator_, rng_);
    take(s);
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
