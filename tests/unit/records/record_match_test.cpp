// The record-compatibility rule: which targets and compilers serve a run, in which order, and
// the one line each step down from an exact match writes; then the rule applied to a cache by
// the best-records query.
#include "records/record_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "records/record_filter.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kClang = "Debian clang version 14.0.6 -O3 -march=native -fno-math-errno -ffp-contract=fast";

TEST(RecordMatchTest, CompilersMatchByFamilyMajorVersionAndNormalisedFlags) {
  EXPECT_EQ(match_compiler(kClang, kClang), CompilerMatch::Exact);
  EXPECT_EQ(match_compiler(kClang, "Debian clang version 14.0.6 -ffp-contract=fast -O3 -fno-math-errno -march=native"), CompilerMatch::SameFlags);
  EXPECT_EQ(match_compiler(kClang, "Debian clang version 14.0.6 -O3 -O3 -march=native -fno-math-errno -ffp-contract=fast"),
            CompilerMatch::SameFlags);
  EXPECT_EQ(match_compiler(kClang, "Ubuntu clang version 14.0.5 -march=native -O3 -fno-math-errno -ffp-contract=fast"), CompilerMatch::SameMajor);
  EXPECT_EQ(match_compiler(kClang, "Debian clang version 15.0.7 -O3 -march=native -fno-math-errno -ffp-contract=fast"), CompilerMatch::Other);
  EXPECT_EQ(match_compiler(kClang, "Debian clang version 14.0.5 -O2 -march=native -fno-math-errno -ffp-contract=fast"), CompilerMatch::Other);
  EXPECT_EQ(match_compiler(kClang, "g++ (Debian 14.2.0-1) 14.2.0 -O3 -march=native -fno-math-errno -ffp-contract=fast"), CompilerMatch::Other);
  EXPECT_EQ(match_compiler("clang++ (test) -O3", "clang++ (test2) -O3"), CompilerMatch::Other) << "unknown versions match only exactly";
  EXPECT_TRUE(replays(CompilerMatch::SameMajor));
  EXPECT_FALSE(replays(CompilerMatch::Other));
}

TEST(RecordMatchTest, ExactTargetBeatsSameCpuModelBeatsSameIsa) {
  const std::string here = "cpu:x86_64:testcpu:avx2:t2";
  EXPECT_EQ(match_target(here, here), TargetMatch::Exact);
  EXPECT_EQ(match_target("cpu:x86_64:testcpu:avx2:t8", here), TargetMatch::SameCpu);
  EXPECT_EQ(match_target("cpu:x86_64:othercpu:avx2:t2", here), TargetMatch::SameIsa);
  EXPECT_EQ(match_target("cpu:x86_64:testcpu:avx512:t2", here), TargetMatch::Other);
  EXPECT_EQ(match_target("not a target", here), TargetMatch::Other);
  // Records tuned without a tensor feature replay where it is; those that may use it do not
  // replay where it is not.
  EXPECT_EQ(match_target("cpu:x86_64:testcpu:avx2:t2", "cpu:x86_64:testcpu:avx2+avx512vnni:t2"), TargetMatch::SameCpu);
  EXPECT_EQ(match_target("cpu:x86_64:testcpu:avx2+avx512vnni:t2", here), TargetMatch::Other);
  EXPECT_TRUE(trains(TargetMatch::SameIsa));
  EXPECT_FALSE(trains(TargetMatch::Other));
  std::vector<std::string> cache = {"cpu:x86_64:aaa:avx2:t8", "cpu:x86_64:othercpu:avx2:t2", "cpu:x86_64:testcpu:avx2:t8",
                                    "cpu:x86_64:testcpu:avx512:t2", "garbage"};
  EXPECT_EQ(serving_targets(cache, here), (std::vector<std::string>{here, "cpu:x86_64:testcpu:avx2:t8", "cpu:x86_64:othercpu:avx2:t2",
                                                                    "cpu:x86_64:aaa:avx2:t8"}));
}

TEST(RecordMatchTest, EachStepDownSaysSoInOneLine) {
  const std::string here = "cpu:x86_64:testcpu:avx2:t2";
  const std::string minor = "Debian clang version 14.0.5 -O3 -march=native -fno-math-errno -ffp-contract=fast";
  EXPECT_EQ(step_down_note("k", here, here, kClang, kClang), "");
  EXPECT_EQ(step_down_note("k", here, here, minor, kClang), "note: 'k': records of clang 14.0.6 replayed under clang 14.0.5 (same major version)");
  EXPECT_EQ(step_down_note("k", here, "cpu:x86_64:testcpu:avx2:t8", kClang, kClang),
            "warning: no record of 'k' for cpu:x86_64:testcpu:avx2:t2: replaying those tuned for cpu:x86_64:testcpu:avx2:t8 (same ISA)");
  std::string both = step_down_note("k", here, "cpu:x86_64:testcpu:avx2:t8", minor, kClang);
  EXPECT_NE(both.find("(same ISA); records of clang 14.0.6 replayed under clang 14.0.5"), std::string::npos) << both;
  EXPECT_EQ(both.find('\n'), std::string::npos);
  EXPECT_NE(step_down_note("k", here, here, "Debian clang version 14.0.6 -march=native -O3 -fno-math-errno -ffp-contract=fast", kClang)
                .find("another order"),
            std::string::npos);
}

// The rule applied to a cache by best_records: one tier at a time, the best tier that has a
// usable record winning over faster records of worse tiers.
class BestRecordsTest : public ::testing::Test {
 protected:
  static constexpr const char* kHere = "cpu:x86_64:testcpu:avx2:t2";

  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_best_records_test");
    std::filesystem::remove_all(dir_);
    dag_ = test::dag_of(test::parse("kernel k { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "k");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A record splitting i by `split` (the schedules differ so that none is a repeat of another).
  Record record(const std::string& target, const std::string& compiler, double seconds, int64_t split) const {
    return test::make_record(*dag_, target, compiler, seconds, {std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{split})});
  }
  std::vector<ReplayedRecord> best(const TuningCache& cache, const std::string& compiler, std::vector<std::string>& notes) const {
    return best_records(cache, RecordScope{dag_, kHere, compiler}, "k", 4, notes);
  }

  std::filesystem::path dir_;
  std::shared_ptr<const ComputeDAG> dag_;
};

TEST_F(BestRecordsTest, TheExactTargetBeatsTheSameCpuModelBeatsTheSameIsa) {
  TuningCache cache(dir_.string());
  cache.append(record("cpu:x86_64:othercpu:avx2:t2", kClang, 1e-4, 2));   // same ISA
  cache.append(record("cpu:x86_64:testcpu:avx512:t2", kClang, 1e-5, 2));  // another ISA: never
  std::vector<std::string> notes;
  ASSERT_EQ(best(cache, kClang, notes).size(), 1u);
  EXPECT_EQ(best(cache, kClang, notes).front().record.target, "cpu:x86_64:othercpu:avx2:t2");
  cache.append(record("cpu:x86_64:testcpu:avx2:t8", kClang, 2e-4, 4));  // same CPU model
  EXPECT_EQ(best(cache, kClang, notes).front().record.target, "cpu:x86_64:testcpu:avx2:t8");
  cache.append(record(kHere, kClang, 3e-4, 8));
  notes.clear();
  std::vector<ReplayedRecord> found = best(cache, kClang, notes);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.front().record.target, kHere);
  EXPECT_TRUE(notes.empty()) << notes.front();
}

TEST_F(BestRecordsTest, RecordsOfAnotherFlagOrderOrMinorVersionReplayAndTheExactCompilerWins) {
  TuningCache cache(dir_.string());
  const std::string reordered = "Debian clang version 14.0.6 -ffp-contract=fast -fno-math-errno -march=native -O3";
  const std::string minor = "Debian clang version 14.0.5 -O3 -march=native -fno-math-errno -ffp-contract=fast";
  const std::string major = "Debian clang version 15.0.7 -O3 -march=native -fno-math-errno -ffp-contract=fast";
  cache.append(record(kHere, major, 1e-5, 2));
  std::vector<std::string> notes;
  EXPECT_TRUE(best(cache, kClang, notes).empty()) << "another major version does not replay";
  cache.append(record(kHere, minor, 1e-4, 4));
  std::vector<ReplayedRecord> found = best(cache, kClang, notes);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.front().record.compiler, minor);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes.front(), "note: 'k': records of clang 14.0.5 replayed under clang 14.0.6 (same major version)");
  cache.append(record(kHere, reordered, 2e-4, 8));
  notes.clear();
  found = best(cache, kClang, notes);
  ASSERT_EQ(found.size(), 1u) << "the same flags in another order beat another minor version, however fast";
  EXPECT_EQ(found.front().record.compiler, reordered);
  ASSERT_EQ(notes.size(), 1u);
  cache.append(record(kHere, kClang, 3e-4, 16));
  notes.clear();
  found = best(cache, kClang, notes);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.front().record.compiler, kClang);
  EXPECT_TRUE(notes.empty());
  // Tuned with the flags in another order, replayed under the original order: the same code.
  notes.clear();
  EXPECT_EQ(best(cache, reordered, notes).front().record.compiler, reordered);
}

}  // namespace
}  // namespace ansor
