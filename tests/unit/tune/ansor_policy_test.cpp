// The ansor policy: registered (with its variant without crossover), it never proposes a
// program twice nor one reported measured; it scores with the task's scorer, shared between
// tasks, and teaches it what was measured; ε-greedy mixes random samples into the batch, and
// the batch is all random while the scorer is untrained.
#include "tune/ansor_policy.h"

#include <gtest/gtest.h>

#include <set>

#include "test_support.h"
#include "tune/program_scorer.h"

namespace ansor {
namespace {

// Random scores, counting what it is asked and told.
class CountingScorer final : public ProgramScorer {
 public:
  std::vector<double> score(const std::vector<State>& states) override {
    scored += static_cast<int>(states.size());
    return random.score(states);
  }
  void update(const std::vector<MeasuredCandidate>& measured) override { learned += static_cast<int>(measured.size()); }
  bool informative() const override { return trained; }

  bool trained = true;
  int scored = 0, learned = 0;
  RandomScorer random{1};
};

class AnsorPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dag_ = test::dag_of(test::parse("kernel mm { A = input f32[32, 24]\n B = const f32[24, 40]\n C = relu(matmul(A, B)) }"), "mm");
  }
  SearchTask task(uint64_t seed, std::shared_ptr<ProgramScorer> scorer = nullptr) const {
    SearchTask t{"mm", dag_, SamplerContext{}, seed, {}};
    if (scorer) t.scorer = [scorer] { return scorer; };
    return t;
  }
  // The proposals reported measured, each at a made-up time.
  static std::vector<MeasuredCandidate> measured(const std::vector<State>& states, double seconds) {
    std::vector<MeasuredCandidate> out;
    for (const State& s : states) {
      Record r;
      r.seconds = seconds;
      seconds *= 1.1;
      out.push_back({s, r});
    }
    return out;
  }

  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(AnsorPolicyTest, IsRegisteredWithAVariantWithoutCrossover) {
  std::vector<std::string> names = search_policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "ansor"), names.end());
  EXPECT_EQ(make_search_policy("ansor", task(0))->name(), "ansor");
  auto without = make_search_policy("ansor-no-crossover", task(0));
  EXPECT_EQ(without->name(), "ansor-no-crossover");
  EXPECT_EQ(dynamic_cast<const AnsorPolicy&>(*without).search().params().crossover_probability, 0);
}

TEST_F(AnsorPolicyTest, NeverProposesAProgramTwiceNorOneMeasured) {
  // Programs measured before the policy started (the cache's records) are never proposed.
  std::vector<State> known = make_search_policy("random", task(7))->propose(16);
  std::set<std::string> seen;
  for (const State& s : known) seen.insert(s.signature());
  auto policy = make_search_policy("ansor", task(7));
  policy->update(measured(known, 1e-3));
  for (int round = 0; round < 5; ++round) {
    std::vector<State> proposed = policy->propose(12);
    ASSERT_EQ(proposed.size(), 12u) << "round " << round;
    for (const State& s : proposed) {
      EXPECT_TRUE(seen.insert(s.signature()).second) << "proposed again:\n" << describe_steps(s);
      EXPECT_EQ(replay(dag_, s.steps()).signature(), s.signature());
    }
    policy->update(measured(proposed, 2e-3));
  }
}

// SearchTask::new_program says which schedules lower to programs measured before (none) and
// which lower to the same program (the same identity): the policy proposes neither.
TEST_F(AnsorPolicyTest, ProposesNoScheduleOfAProgramMeasuredBeforeNorTwoOfOneProgram) {
  for (bool trained : {false, true}) {
    auto scorer = std::make_shared<CountingScorer>();
    scorer->trained = trained;
    SearchTask t = task(5, scorer);
    std::set<std::string> asked;
    size_t calls = 0;
    // Every other schedule asked about "was measured"; the rest fall into three programs.
    t.new_program = [&](const State& s) -> std::optional<std::string> {
      asked.insert(s.signature());
      if (++calls % 2 == 0) return std::nullopt;
      return std::to_string(calls % 3);
    };
    AnsorPolicy policy(t);
    std::vector<State> proposed = policy.propose(8);
    EXPECT_EQ(proposed.size(), 3u) << (trained ? "guided" : "random");
    std::set<std::string> signatures;
    for (const State& s : proposed) signatures.insert(s.signature());
    EXPECT_EQ(signatures.size(), 3u);
    // A schedule passed over is never offered again, nor asked about again.
    const size_t calls_before = calls;
    for (const State& s : policy.propose(8)) EXPECT_EQ(signatures.count(s.signature()), 0u);
    EXPECT_GT(calls, calls_before);
    EXPECT_EQ(calls, asked.size());
  }
}

TEST_F(AnsorPolicyTest, ScoresWithTheSharedScorerAndTeachesIt) {
  auto scorer = std::make_shared<CountingScorer>();
  auto first = make_search_policy("ansor", task(1, scorer));
  auto second = make_search_policy("ansor", task(2, scorer));
  std::vector<State> a = first->propose(8), b = second->propose(8);
  EXPECT_GT(scorer->scored, 2 * EvolutionParams{}.population);
  first->update(measured(a, 1e-3));
  second->update(measured(b, 1e-3));
  EXPECT_EQ(scorer->learned, static_cast<int>(a.size() + b.size()));
}

TEST_F(AnsorPolicyTest, EpsilonGreedyDrawsItsShareAtRandom) {
  auto scorer = std::make_shared<CountingScorer>();
  EvolutionParams all_random;
  all_random.eps_greedy = 1.0;
  AnsorPolicy random_only(task(3, scorer), all_random);
  EXPECT_EQ(random_only.propose(10).size(), 10u);
  EXPECT_EQ(scorer->scored, 0) << "with ε = 1 nothing is searched";
  EvolutionParams none_random;
  none_random.eps_greedy = 0.0;
  AnsorPolicy searched(task(3, scorer), none_random);
  EXPECT_EQ(searched.propose(10).size(), 10u);
  EXPECT_GT(scorer->scored, 0);
}

TEST_F(AnsorPolicyTest, AnUntrainedScorerMakesTheWholeBatchRandom) {
  auto scorer = std::make_shared<CountingScorer>();
  scorer->trained = false;
  AnsorPolicy policy(task(5, scorer), EvolutionParams{});
  std::vector<State> first = policy.propose(16);
  EXPECT_EQ(first.size(), 16u);
  policy.update(measured(first, 1e-3));
  EXPECT_EQ(policy.propose(16).size(), 16u);
  EXPECT_EQ(scorer->scored, 0) << "random scores guide nothing: no search";
  scorer->trained = true;
  EXPECT_EQ(policy.propose(16).size(), 16u);
  EXPECT_GT(scorer->scored, 0) << "a trained scorer guides the evolution";
}

}  // namespace
}  // namespace ansor
