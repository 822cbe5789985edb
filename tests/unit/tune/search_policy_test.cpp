// Search policies: the registry by name, and the random policy's proposals: distinct schedules
// that replay from their steps, never one that was proposed or reported (by update, as the
// cache's records are) before.
#include "tune/search_policy.h"

#include <gtest/gtest.h>

#include <set>

#include "test_support.h"

namespace ansor {
namespace {

class PolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dag_ = test::dag_of(test::parse("kernel mm { A = input f32[16, 8]\n B = const f32[8, 12]\n C = matmul(A, B) }"), "mm");
  }
  SearchTask task(uint64_t seed) const { return {"mm", dag_, SamplerContext{}, seed}; }

  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(PolicyTest, UnknownNamesListTheKnownPolicies) {
  std::vector<std::string> names = search_policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "random"), names.end());
  EXPECT_EQ(make_search_policy("random", task(0))->name(), "random");
  try {
    make_search_policy("simulated-annealing", task(0));
    FAIL() << "made an unknown policy";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown search policy 'simulated-annealing'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos) << e.what();
  }
}

TEST_F(PolicyTest, RandomProposalsAreDistinctAndReplay) {
  auto policy = make_search_policy("random", task(1));
  std::set<std::string> seen;
  for (int round = 0; round < 3; ++round) {
    std::vector<State> proposed = policy->propose(6);
    ASSERT_EQ(proposed.size(), 6u);
    for (const State& s : proposed) {
      EXPECT_TRUE(seen.insert(s.signature()).second) << "proposed twice:\n" << describe_steps(s);
      EXPECT_EQ(replay(dag_, s.steps()).signature(), s.signature());
    }
  }
}

TEST_F(PolicyTest, RandomNeverProposesWhatUpdateReported) {
  // A second policy with the same seed draws the same programs: told that the first one's
  // were measured, it must propose others.
  std::vector<State> measured = make_search_policy("random", task(7))->propose(8);
  ASSERT_EQ(measured.size(), 8u);
  std::vector<MeasuredCandidate> known;
  std::set<std::string> known_signatures;
  for (const State& s : measured) {
    known.push_back({s, Record{}});
    known_signatures.insert(s.signature());
  }
  auto policy = make_search_policy("random", task(7));
  policy->update(known);
  std::vector<State> proposed = policy->propose(8);
  EXPECT_FALSE(proposed.empty());
  for (const State& s : proposed) EXPECT_EQ(known_signatures.count(s.signature()), 0u) << describe_steps(s);
}

TEST_F(PolicyTest, EveryPolicyRunsOutOfASmallSpace) {
  auto dag = test::dag_of(test::parse("kernel add1 { X = input i32[3]\n Y[i:3] = X[i] + 1 }"), "add1");
  for (const char* name : {"random", "ansor", "ansor-no-crossover"}) {
    SCOPED_TRACE(name);
    auto policy = make_search_policy(name, {"add1", dag, SamplerContext{}, 0});
    std::set<std::string> seen;
    for (int round = 0; round < 20; ++round) {
      std::vector<State> proposed = policy->propose(8);
      for (const State& s : proposed) EXPECT_TRUE(seen.insert(s.signature()).second);
      if (proposed.empty()) break;
    }
    EXPECT_TRUE(policy->propose(8).empty()) << seen.size() << " schedules and still more";
  }
}

}  // namespace
}  // namespace ansor
