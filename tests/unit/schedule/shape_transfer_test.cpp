// Split lengths adapted to another extent, and schedules replayed on a DAG of another shape.
#include "schedule/shape_transfer.h"

#include <gtest/gtest.h>

#include "dag_builder.h"
#include "schedule/steps.h"

namespace ansor {
namespace {

TEST(ShapeTransferTest, InnerLengthsStayWhileTheyFitAndOuterOnesShrink) {
  constexpr SplitFit kFit = SplitFit::KeepInner;
  // A larger extent keeps every length: the outer loop grows.
  EXPECT_EQ(adapt_split_lengths({4, 1, 32}, 1000, kFit), (std::vector<int64_t>{4, 1, 32}));
  // 200 holds 32, then 200 / 32 = 6 of 4: ragged (7 tiles of 32 cover 224).
  EXPECT_EQ(adapt_split_lengths({8, 2, 32}, 200, kFit), (std::vector<int64_t>{3, 2, 32}));
  // An extent below the innermost length shrinks it too; the rest become 1.
  EXPECT_EQ(adapt_split_lengths({4, 16}, 10, kFit), (std::vector<int64_t>{1, 10}));
  // Undecided lengths stay undecided; an unknown extent keeps everything.
  EXPECT_EQ(adapt_split_lengths({0, 16}, 8, kFit), (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(adapt_split_lengths({4, 16}, -1, kFit), (std::vector<int64_t>{4, 16}));
}

TEST(ShapeTransferTest, DivisorsNearestToTheLengthsLeaveNoTail) {
  constexpr SplitFit kFit = SplitFit::Divisors;
  // 1000 = 2^3 5^3: 32 becomes 40 (ratio 1.25, against 1.28 for 25); 25 is left, whose divisor
  // nearest to 2 is 1 (ratio 2, against 2.5 for 5).
  EXPECT_EQ(adapt_split_lengths({2, 1, 32}, 1000, kFit), (std::vector<int64_t>{1, 1, 40}));
  EXPECT_EQ(adapt_split_lengths({4, 1, 8}, 200, kFit), (std::vector<int64_t>{5, 1, 8}));
  // Lengths that divide are kept.
  EXPECT_EQ(adapt_split_lengths({4, 16}, 128, kFit), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(adapt_split_lengths({4, 16}, 24, kFit), (std::vector<int64_t>{2, 12}));
}

// Along a vector axis (16 lanes here) an innermost length of whole vectors stays whole: the
// divisor fit takes a divisor of whole vectors where the extent has one and keeps the length,
// with a ragged tail, where it has none; other lengths fit as before.
TEST(ShapeTransferTest, WholeVectorsStayWholeAlongTheVectorAxis) {
  EXPECT_EQ(adapt_split_lengths({2, 1, 32}, 1000, SplitFit::Divisors, 16), (std::vector<int64_t>{1, 1, 32}));
  EXPECT_EQ(adapt_split_lengths({2, 1, 32}, 960, SplitFit::Divisors, 16), (std::vector<int64_t>{2, 1, 32}));
  EXPECT_EQ(adapt_split_lengths({2, 64}, 1200, SplitFit::Divisors, 16), (std::vector<int64_t>{1, 48}));
  EXPECT_EQ(adapt_split_lengths({4, 16}, 24, SplitFit::Divisors, 16), (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(adapt_split_lengths({8, 2, 64}, 200, SplitFit::KeepInner, 16), (std::vector<int64_t>{1, 2, 64}));
  EXPECT_EQ(adapt_split_lengths({4, 64}, 40, SplitFit::KeepInner, 16), (std::vector<int64_t>{1, 32}));
  // A length that was not whole vectors, or an extent under one vector, fits as before.
  EXPECT_EQ(adapt_split_lengths({4, 1, 8}, 200, SplitFit::Divisors, 16), (std::vector<int64_t>{5, 1, 8}));
  EXPECT_EQ(adapt_split_lengths({4, 16}, 10, SplitFit::KeepInner, 16), (std::vector<int64_t>{1, 10}));
}

// map_schedule keeps whole vectors only along a stage's last data axis, the vector axis.
TEST(ShapeTransferTest, OnlyTheVectorAxisKeepsWholeVectors) {
  auto from = test::DagBuilder().input("X", {512, 512}).compute("Y", {512, 512}, [](const auto& ij) { return load("X", DType::F32, ij); }, {"i", "j"}).build();
  auto to = test::DagBuilder().input("X", {1000, 1000}).compute("Y", {1000, 1000}, [](const auto& ij) { return load("X", DType::F32, ij); }, {"i", "j"}).build();
  State s(from);
  s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{32}));
  s.apply(std::make_shared<SplitStep>(1, 2, std::vector<int64_t>{32}));
  std::string why;
  std::optional<State> mapped = map_schedule(s.steps(), to, SplitFit::Divisors, why, 16);
  ASSERT_TRUE(mapped) << why;
  EXPECT_EQ(std::dynamic_pointer_cast<const SplitStep>(mapped->steps()[0])->lengths, (std::vector<int64_t>{40}));  // i: a divisor
  EXPECT_EQ(std::dynamic_pointer_cast<const SplitStep>(mapped->steps()[1])->lengths, (std::vector<int64_t>{32}));  // j: whole vectors
}

TEST(ShapeTransferTest, SplitsFollowTheNewExtentsAndFollowSplitsFollowThem) {
  auto big = test::DagBuilder().input("X", {512, 64}).compute("Y", {512, 64}, [](const auto& ij) { return load("X", DType::F32, ij); }, {"i", "j"}).build();
  auto small = test::DagBuilder().input("X", {100, 64}).compute("Y", {100, 64}, [](const auto& ij) { return load("X", DType::F32, ij); }, {"i", "j"}).build();
  State s(big);
  s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{8, 16}));
  s.apply(std::make_shared<FollowSplitStep>(1, 3, 0, 2));
  std::string why;
  std::optional<State> mapped = map_schedule(s.steps(), small, SplitFit::KeepInner, why);
  ASSERT_TRUE(mapped) << why;
  auto split = std::dynamic_pointer_cast<const SplitStep>(mapped->steps()[0]);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->lengths, (std::vector<int64_t>{6, 16}));
  // i: ceil(100 / 96) = 2 x 6 x 16; j follows i's adapted lengths.
  const Stage& y = mapped->stage(1);
  std::vector<int64_t> extents;
  for (int leaf : y.leaves) extents.push_back(y.iters[leaf].extent);
  EXPECT_EQ(extents, (std::vector<int64_t>{2, 6, 16, 1, 4, 16}));
}

TEST(ShapeTransferTest, AStepThatDoesNotApplyLeavesTheScheduleUnmapped) {
  auto one_loop = test::DagBuilder().input("X", {16}).compute("Y", {16}, [](const auto& i) { return load("X", DType::F32, i); }).build();
  auto two_loops = test::DagBuilder().input("X", {16, 4}).compute("Y", {16, 4}, [](const auto& ij) { return load("X", DType::F32, ij); }).build();
  State s(two_loops);
  s.apply(std::make_shared<FuseStep>(1, std::vector<int>{0, 1}));
  std::string why;
  EXPECT_FALSE(map_schedule(s.steps(), one_loop, SplitFit::KeepInner, why));
  EXPECT_NE(why.find("step 0 (fuse)"), std::string::npos) << why;
}

}  // namespace
}  // namespace ansor
