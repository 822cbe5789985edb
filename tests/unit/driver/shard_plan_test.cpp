// Shards: the I/N option and the job engines' variables, trials apportioned exactly, and a
// split that tunes every kernel once with balanced expected costs.
#include "driver/shard_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "test_support.h"

namespace ansor {
namespace {

using Env = std::map<std::string, std::string>;

std::optional<ShardSpec> from(const Env& env) {
  return shard_from_environment([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(ShardPlan, ParsesIndexOverCountAndRefusesTheRest) {
  ShardSpec s = parse_shard("2/8");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  for (const char* bad : {"8/8", "-1/4", "1", "1/", "/4", "a/4", "1/4x", "0/0", ""}) EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
  try {
    parse_shard("4/4");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--shard: shard index 4 is not in 0..3 (shards count from 0)");
  }
}

TEST(ShardPlan, TakesTheShardFromTheJobEnginesVariables) {
  EXPECT_FALSE(from({}).has_value());
  EXPECT_FALSE(from({{"SLURM_JOB_ID", "17"}}).has_value()) << "a Slurm job that is no array is one shard";

  std::optional<ShardSpec> k8s = from({{"JOB_COMPLETION_INDEX", "3"}, {"ANSOR_SHARD_COUNT", "4"}});
  ASSERT_TRUE(k8s);
  EXPECT_EQ(k8s->index, 3);
  EXPECT_EQ(k8s->count, 4);
  EXPECT_EQ(k8s->source, "JOB_COMPLETION_INDEX=3, ANSOR_SHARD_COUNT=4");
  EXPECT_THROW(from({{"JOB_COMPLETION_INDEX", "3"}}), std::invalid_argument) << "the count is passed once";

  std::optional<ShardSpec> slurm = from({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->index, 4) << "an array 1-8 counts from its first task";
  EXPECT_EQ(slurm->count, 8);
  EXPECT_THROW(from({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}), std::invalid_argument);
  EXPECT_THROW(from({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}), std::invalid_argument);

  std::optional<ShardSpec> own = from({{"ANSOR_SHARD", "1/2"}, {"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}});
  ASSERT_TRUE(own);
  EXPECT_EQ(own->count, 2) << "ANSOR_SHARD comes first";
}

TEST(ShardPlan, ApportionsABudgetExactlyInProportion) {
  EXPECT_EQ(apportion_trials({64, 64, 128}, 100), (std::vector<int>{25, 25, 50}));
  std::vector<int> parts = apportion_trials({3, 5, 7, 11}, 10);
  EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), 0), 10);
  EXPECT_EQ(apportion_trials({0, 0, 0}, 7), (std::vector<int>{3, 2, 2})) << "evenly, the earlier first";
  EXPECT_EQ(apportion_trials({5, 5}, 0), (std::vector<int>{0, 0}));
}

Program program_of(int kernels) {
  std::string text;
  for (int k = 0; k < kernels; ++k) {
    int n = 8 * (k % 5 + 1);
    text += "kernel k" + std::to_string(k) + " {\n  A = input f32[" + std::to_string(n) + ", 16]\n  B = const f32[16, 16]\n  C = matmul(A, B)\n}\n";
  }
  return test::parse(text);
}

TEST(ShardPlan, EveryKernelGoesToExactlyOneShardTheSameWayEachTime) {
  Program program = program_of(11);
  std::vector<int> trials(11, 32);
  trials[3] = 0;  // a kernel that asks for no trials still has a shard
  for (int count : {1, 2, 3, 4, 11, 16}) {
    ShardPlan plan = plan_shards(program, trials, count);
    EXPECT_EQ(plan.shard_of, plan_shards(program, trials, count).shard_of) << "deterministic";
    std::multiset<std::string> names;
    int total = 0;
    for (int s = 0; s < count; ++s) {
      Program part = shard_program(program, plan, s);
      for (const Kernel& k : part.kernels) names.insert(k.name);
      total += plan.shard_trials[static_cast<size_t>(s)];
    }
    EXPECT_EQ(names.size(), 11u) << count;
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 11u) << count;
    EXPECT_EQ(total, std::accumulate(trials.begin(), trials.end(), 0)) << count;
  }
}

TEST(ShardPlan, NetworkCountsWeightTheCost) {
  Program program = test::parse(
      "kernel a {\n  A = input f32[8, 16]\n  B = const f32[16, 16]\n  C = matmul(A, B)\n}\n"
      "kernel b {\n  A = input f32[8, 16]\n  B = const f32[16, 16]\n  C = matmul(A, B)\n}\n"
      "network net { a * 3, b }\n");
  EXPECT_EQ(kernel_weight(program, program.kernels[0]), 3);
  ShardPlan plan = plan_shards(program, {10, 10}, 2);
  EXPECT_DOUBLE_EQ(plan.cost[0], 3 * plan.cost[1]);
  EXPECT_DOUBLE_EQ(plan.imbalance(), 1.5);
}

TEST(ShardPlan, ResNet50SplitsWithin15PercentOfTheMeanOver4And8Shards) {
  Program program = load_program_file(std::string(ANSOR_SOURCE_DIR) + "/bench/resnet50.def");
  ASSERT_EQ(program.kernels.size(), 24u);
  const std::vector<int> trials = kernel_trials(program, std::nullopt);
  EXPECT_EQ(trials, std::vector<int>(24, 64));
  for (int count : {4, 8}) EXPECT_LE(plan_shards(program, trials, count).imbalance(), 1.15) << count << " shards";
}

}  // namespace
}  // namespace ansor
