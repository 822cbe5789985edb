// Random sampling of distinct schedules.
#include "tune/random_policy.h"

namespace ansor {

namespace {

// Draws per wanted schedule before concluding that a small space has no new ones left.
constexpr int kDrawsPerProposal = 50;

}  // namespace

RandomPolicy::RandomPolicy(const SearchTask& task)
    : sketches_(generate_sketches(task.dag, task.sampler, SketchRules::for_context(task.sampler))),
      annotator_(task.sampler),
      rng_(task.seed) {}

std::vector<State> RandomPolicy::propose(int n) {
  std::vector<State> out;
  for (int draws = 0; static_cast<int>(out.size()) < n && draws < n * kDrawsPerProposal; ++draws) {
    State s = sample_program(sketches_, annotator_, rng_);
    if (seen_.insert(s.signature()).second) out.push_back(std::move(s));
  }
  return out;
}

void RandomPolicy::update(const std::vector<MeasuredCandidate>& measured) {
  for (const MeasuredCandidate& m : measured) seen_.insert(m.state.signature());
}

}  // namespace ansor
