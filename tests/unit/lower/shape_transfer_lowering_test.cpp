// A matmul schedule tuned at 512x512x512 (cache/'s first record), mapped to other shapes: the
// mapped schedule lowers, and mapped either way to a shape where every split shrinks or goes
// ragged, it computes what the naive program does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dag_builder.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "schedule/shape_transfer.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

// Cache-write, 3-level tiles of 4x1x8 rows by 2x1x32 columns, k by 8, vectorized 32 columns.
constexpr const char* kSteps512 = R"([
  {"kind": "cache_write", "scope": "local", "stage": 2},
  {"iter": 0, "kind": "split", "lengths": [4, 1, 8], "stage": 2},
  {"iter": 4, "kind": "split", "lengths": [2, 1, 32], "stage": 2},
  {"iter": 8, "kind": "split", "lengths": [8], "stage": 2},
  {"kind": "reorder", "order": [0, 4, 1, 5, 8, 2, 6, 9, 3, 7], "stage": 2},
  {"iter": 0, "kind": "follow_split", "n_split": 2, "src_step": 1, "stage": 3},
  {"iter": 3, "kind": "follow_split", "n_split": 2, "src_step": 2, "stage": 3},
  {"kind": "reorder", "order": [0, 3, 1, 4, 2, 5], "stage": 3},
  {"kind": "compute_at", "stage": 2, "target_iter": 3, "target_stage": 3},
  {"annotation": "parallel", "iter": 0, "kind": "annotate", "stage": 3},
  {"annotation": "vectorize", "iter": 9, "kind": "annotate", "stage": 2},
  {"auto_unroll_max_step": 64, "iter": 0, "kind": "pragma", "stage": 2},
  {"annotation": "vectorize", "iter": 5, "kind": "annotate", "stage": 3}])";

std::vector<StepPtr> steps_512() {
  std::vector<StepPtr> steps;
  for (const nlohmann::json& j : nlohmann::json::parse(kSteps512)) steps.push_back(step_from_json(j));
  return steps;
}

std::shared_ptr<const ComputeDAG> matmul(int64_t m, int64_t n, int64_t k) {
  return test::DagBuilder().input("A", {m, k}).input("B", {k, n}).matmul("C", "A", "B").build();
}

TEST(ShapeTransferLoweringTest, The512ScheduleMapsTo200By1000AndLowers) {
  ASSERT_NO_THROW(replay(matmul(512, 512, 512), steps_512()));
  std::string why;
  std::optional<State> mapped = map_schedule(steps_512(), matmul(200, 1000, 512), SplitFit::KeepInner, why);
  ASSERT_TRUE(mapped) << why;
  // The 32 vectorized columns and the 8 rows of the register tile stay; rows go ragged
  // (200 = 6 x 32 + 8) and columns keep 2 x 32 per tile (1000 = 15 x 64 + 40).
  auto rows = std::dynamic_pointer_cast<const SplitStep>(mapped->steps()[1]);
  auto cols = std::dynamic_pointer_cast<const SplitStep>(mapped->steps()[2]);
  ASSERT_TRUE(rows && cols);
  EXPECT_EQ(rows->lengths, (std::vector<int64_t>{4, 1, 8}));
  EXPECT_EQ(cols->lengths, (std::vector<int64_t>{2, 1, 32}));
  EXPECT_NO_THROW(lower_state(*mapped, "mm"));
}

TEST(ShapeTransferLoweringTest, TheMappedScheduleComputesTheProductAtARaggedShape) {
  // Rows 20 < 4 x 8, columns 100 = 3 x 32 + 4, k 12 = 8 + 4.
  auto dag = matmul(20, 100, 12);
  std::string why;
  LoweredKernel naive = lower_state(State(dag), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 5);
  interpret(naive, expected);
  for (SplitFit fit : {SplitFit::KeepInner, SplitFit::Divisors}) {
    std::optional<State> mapped = map_schedule(steps_512(), dag, fit, why);
    ASSERT_TRUE(mapped) << why;
    LoweredKernel lowered = lower_state(*mapped, "mm");
    std::vector<std::vector<double>> args = test::random_args(naive, 5);
    interpret(lowered, args);
    ASSERT_EQ(args.size(), expected.size());
    for (size_t i = 0; i < args.back().size(); ++i) ASSERT_NEAR(args.back()[i], expected.back()[i], 1e-9) << "element " << i;
  }
}

}  // namespace
}  // namespace ansor
