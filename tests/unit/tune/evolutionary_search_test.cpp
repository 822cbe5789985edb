// The evolutionary search learns from its scorer: with a scorer that prefers large innermost
// tiles, its best programs have larger ones than random samples; it returns distinct programs,
// never an excluded one, seeds its population with measured programs, and crossover can be
// switched off.
#include "tune/evolutionary_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

// Prefers large innermost tiles: the sum over splits of log2 of the innermost length.
class InnermostTileScorer final : public ProgramScorer {
 public:
  static double value(const State& s) {
    double v = 0;
    for (const StepPtr& step : s.steps())
      if (auto* split = dynamic_cast<const SplitStep*>(step.get())) v += std::log2(static_cast<double>(split->lengths.back()));
    return v;
  }
  std::vector<double> score(const std::vector<State>& states) override {
    std::vector<double> out;
    for (const State& s : states) out.push_back(value(s));
    return out;
  }
  void update(const std::vector<MeasuredCandidate>&) override {}
};

// Scores one program 1, every other 0.
class OneProgramScorer final : public ProgramScorer {
 public:
  explicit OneProgramScorer(std::string signature) : signature_(std::move(signature)) {}
  std::vector<double> score(const std::vector<State>& states) override {
    std::vector<double> out;
    for (const State& s : states) out.push_back(s.signature() == signature_ ? 1.0 : 0.0);
    return out;
  }
  void update(const std::vector<MeasuredCandidate>&) override {}

 private:
  std::string signature_;
};

struct SearchFixture {
  std::shared_ptr<const ComputeDAG> dag;
  SamplerContext ctx;
  std::shared_ptr<const SketchCatalog> catalog;

  explicit SearchFixture(const std::string& def, const std::string& kernel) : dag(test::dag_of(test::parse(def), kernel)) {
    catalog = std::make_shared<const SketchCatalog>(generate_sketches(dag, ctx, SketchRules::cpu()));
  }
};

constexpr const char* kMatmul = "kernel mm { A = input f32[64, 64]\n B = const f32[64, 64]\n C = matmul(A, B) }";
constexpr const char* kTwoLayers =
    "kernel mlp { X = input f32[32, 48]\n W1 = const f32[48, 64]\n W2 = const f32[64, 16]\n H = relu(matmul(X, W1))\n Y = matmul(H, W2) }";

const auto kNothingExcluded = [](const std::string&) { return false; };

TEST(EvolutionarySearchTest, TopProgramsScoreBetterThanRandomSamples) {
  SearchFixture f(kMatmul, "mm");
  InnermostTileScorer scorer;
  EvolutionarySearch search(f.ctx, f.catalog, EvolutionParams{});
  std::mt19937_64 rng(1);
  std::vector<State> top = search.search(16, {}, scorer, kNothingExcluded, rng);
  ASSERT_EQ(top.size(), 16u);
  Annotator annotator(f.ctx);
  std::vector<double> random;
  for (int i = 0; i < 400; ++i) random.push_back(InnermostTileScorer::value(sample_program(f.catalog->sketches(), annotator, rng)));
  std::sort(random.begin(), random.end());
  const double random_p95 = random[random.size() * 95 / 100];
  double top_mean = 0;
  for (const State& s : top) top_mean += InnermostTileScorer::value(s) / static_cast<double>(top.size());
  // The search's sixteen best are, on average, better than 95 % of random programs, and its
  // best is at least as good as the best of 400 random ones.
  EXPECT_GT(top_mean, random_p95) << "random median " << random[random.size() / 2];
  EXPECT_GE(InnermostTileScorer::value(top.front()), random.back());
  for (size_t i = 1; i < top.size(); ++i) EXPECT_GE(InnermostTileScorer::value(top[i - 1]), InnermostTileScorer::value(top[i]));
}

TEST(EvolutionarySearchTest, ReturnsDistinctProgramsThatAreNotExcluded) {
  SearchFixture f(kTwoLayers, "mlp");
  RandomScorer scorer(2);
  EvolutionarySearch search(f.ctx, f.catalog, EvolutionParams{});
  std::mt19937_64 rng(3);
  // Exclude about half of all programs, by their signature's hash.
  auto excluded = [](const std::string& signature) { return std::hash<std::string>()(signature) % 2 == 0; };
  std::vector<State> found = search.search(40, {}, scorer, excluded, rng);
  EXPECT_EQ(found.size(), 40u);
  std::set<std::string> signatures;
  for (const State& s : found) {
    EXPECT_FALSE(excluded(s.signature()));
    EXPECT_TRUE(signatures.insert(s.signature()).second);
  }
  EXPECT_GT(search.last_stats().mutations_made, 0);
  EXPECT_GT(search.last_stats().crossovers_made, 0);
}

TEST(EvolutionarySearchTest, MeasuredProgramsSeedThePopulation) {
  SearchFixture f(kMatmul, "mm");
  Annotator annotator(f.ctx);
  std::mt19937_64 rng(4);
  State measured = sample_program(f.catalog->sketches(), annotator, rng);
  OneProgramScorer scorer(measured.signature());
  EvolutionarySearch search(f.ctx, f.catalog, EvolutionParams{});
  std::vector<State> found = search.search(4, {measured}, scorer, kNothingExcluded, rng);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().signature(), measured.signature());
}

TEST(EvolutionarySearchTest, CrossoverCanBeSwitchedOff) {
  SearchFixture f(kTwoLayers, "mlp");
  EvolutionParams params;
  params.population = 48;
  params.crossover_probability = 0;
  RandomScorer scorer(5);
  EvolutionarySearch search(f.ctx, f.catalog, params);
  std::mt19937_64 rng(6);
  EXPECT_FALSE(search.search(8, {}, scorer, kNothingExcluded, rng).empty());
  EXPECT_EQ(search.last_stats().crossovers_tried, 0);
  EXPECT_GT(search.last_stats().mutations_made, 0);
  // Elites keep their scores: they are not scored again.
  EXPECT_GE(search.last_stats().scored, 48);
  EXPECT_LE(search.last_stats().scored, 48 * (params.generations + 1) - params.elites * params.generations);
}

}  // namespace
}  // namespace ansor
