// The learned scorer: trained from a cache's records of any workload (each rebuilt from its own
// DAG text), saved beside the cache and loaded again, and learning from what is measured.
#include "tune/learned_scorer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "cost_model/ranking_metrics.h"
#include "features/features.h"
#include "sampler/annotation.h"
#include "sampler/sketch_rule.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kTarget = "cpu:x86_64:test:avx512:t2";

// A made-up machine on which a program's time follows its vector and parallel lengths (the
// features see both), so that what the model learned can be checked.
double made_up_seconds(const State& state) {
  double vec = 0, parallel = 0;
  for (const StoreFeatures& store : extract_features(state)) {
    vec += store.values[static_cast<int>(Feature::VecLen)];
    parallel += store.values[static_cast<int>(Feature::ParallelLen)];
  }
  return 1e-3 / (1 + vec + 0.5 * parallel);
}

class LearnedScorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("learned_scorer");
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::shared_ptr<const ComputeDAG> matmul(int m, int n, int k) {
    return test::dag_of(test::parse(fmt::format("kernel mm {{ A = input f32[{0}, {2}]\n B = input f32[{2}, {1}]\n C = matmul(A, B) }}", m, n, k)),
                        "mm");
  }
  // Distinct sampled programs of the DAG.
  static std::vector<State> programs(const std::shared_ptr<const ComputeDAG>& dag, int n, uint64_t seed) {
    SamplerContext ctx;
    std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
    Annotator annotator(ctx);
    std::mt19937_64 rng(seed);
    std::vector<State> out;
    std::set<std::string> seen;
    for (int draws = 0; static_cast<int>(out.size()) < n && draws < 50 * n; ++draws) {
      State s = sample_program(sketches, annotator, rng);
      if (seen.insert(s.signature()).second) out.push_back(std::move(s));
    }
    return out;
  }
  static Record record_of(const State& s) {
    Record r;
    r.workload_key = s.dag().workload_key();
    r.dag = s.dag().canonical_text();
    r.kernel = "mm";
    r.target = kTarget;
    r.compiler = "test compiler";
    r.steps = s.steps();
    r.seconds = made_up_seconds(s);
    r.repeats = 3;
    r.generator_version = "test";
    return r;
  }
  static LearnedScorerOptions options(const std::string& model_path) {
    LearnedScorerOptions o;
    o.model.min_programs = 40;
    o.model.max_rounds = 60;
    o.model_path = model_path;
    return o;
  }

  std::filesystem::path dir_;
};

TEST_F(LearnedScorerTest, LearnsFromTheCacheAndRanksAnotherWorkload) {
  TuningCache cache(dir_.string());
  for (const State& s : programs(matmul(64, 64, 64), 120, 1)) cache.append(record_of(s));
  std::string model_path = cost_model_path(cache, kTarget);
  LearnedScorer scorer(cache, kTarget, options(model_path));
  ASSERT_TRUE(scorer.model().trained());
  EXPECT_EQ(scorer.training_programs(), 120);
  EXPECT_TRUE(std::filesystem::exists(model_path));

  // A workload the cache has no record of: ranked by what the others taught.
  std::vector<State> others = programs(matmul(48, 80, 32), 60, 2);
  std::vector<double> predicted = scorer.score(others), throughputs;
  for (const State& s : others) throughputs.push_back(1 / made_up_seconds(s));
  std::vector<std::string> workloads(others.size(), others.front().dag().workload_key());
  double accuracy = pairwise_accuracy(workloads, throughputs, predicted);
  EXPECT_GT(accuracy, 0.75) << "pairwise accuracy on an unseen workload";
}

TEST_F(LearnedScorerTest, LearnsFromTargetsOfTheSameIsaToo) {
  // Records of this target, of another CPU with the same ISA, and of another ISA.
  TuningCache cache(dir_.string());
  std::vector<State> states = programs(matmul(64, 64, 64), 90, 5);
  for (size_t i = 0; i < states.size(); ++i) {
    Record r = record_of(states[i]);
    r.target = i < 30 ? kTarget : i < 60 ? "cpu:x86_64:other:avx512:t8" : "cpu:x86_64:test:avx2:t2";
    cache.append(r);
  }
  LearnedScorer scorer(cache, kTarget, options(""));
  EXPECT_EQ(scorer.training_programs(), 60) << "this target's 30 and the other CPU's 30, not the other ISA's";
  EXPECT_TRUE(scorer.model().trained());
}

TEST_F(LearnedScorerTest, LearnsFromRecordsOfAnotherCompilerVersionToo) {
  // Their code may differ, so they do not replay (records/record_match.h), but the schedules'
  // relative speeds still teach the model.
  TuningCache cache(dir_.string());
  std::vector<State> states = programs(matmul(64, 64, 64), 60, 6);
  for (size_t i = 0; i < states.size(); ++i) {
    Record r = record_of(states[i]);
    r.compiler = i < 30 ? "Debian clang version 14.0.6 -O3" : "Debian clang version 15.0.7 -O3";
    cache.append(r);
  }
  LearnedScorer scorer(cache, kTarget, options(""));
  EXPECT_EQ(scorer.training_programs(), 60);
  EXPECT_TRUE(scorer.model().trained());
}

TEST_F(LearnedScorerTest, ALaterScorerStartsFromTheSavedModel) {
  TuningCache cache(dir_.string());
  for (const State& s : programs(matmul(64, 64, 64), 60, 3)) cache.append(record_of(s));
  std::string model_path = cost_model_path(cache, kTarget);
  LearnedScorer first(cache, kTarget, options(model_path));
  ASSERT_TRUE(first.model().trained());
  LearnedScorer second(cache, kTarget, options(model_path));
  EXPECT_EQ(second.model().rounds(), first.model().rounds());
  std::vector<State> probe = programs(matmul(64, 64, 64), 20, 4);
  EXPECT_EQ(second.score(probe), first.score(probe));
}

TEST_F(LearnedScorerTest, RandomUntilEnoughProgramsThenTrainsOnWhatIsMeasured) {
  TuningCache cache(dir_.string());
  LearnedScorer scorer(cache, kTarget, options(""));
  std::vector<State> states = programs(matmul(64, 64, 64), 60, 5);
  EXPECT_FALSE(scorer.model().trained());
  for (double s : scorer.score(states)) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
  std::vector<MeasuredCandidate> measured;
  for (const State& s : states) measured.push_back({s, record_of(s)});
  Record failed = record_of(states[0]);
  failed.error = MeasureError::RunTimeout;
  measured.push_back({states[0], failed});
  scorer.update(measured);
  scorer.update(measured);  // known programs are not learned twice
  EXPECT_EQ(scorer.training_programs(), 60);
  EXPECT_TRUE(scorer.model().trained());
}

TEST_F(LearnedScorerTest, OneSourceMakesOneScorer) {
  TuningCache cache(dir_.string());
  auto source = learned_scorer_source(cache, kTarget, 0);
  std::shared_ptr<ProgramScorer> a = source(), b = source();
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(learned_scorer_source(cache, kTarget, 0)().get(), a.get());
}

}  // namespace
}  // namespace ansor
