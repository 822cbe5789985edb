// The sizes of translation units the planner picks from compile times.
#include "measure/unit_planner.h"

#include <gtest/gtest.h>

namespace ansor {
namespace {

UnitPlannerOptions options() {
  UnitPlannerOptions o;
  // Powers of two: the sizes below are exact.
  o.startup_seconds = 0.25;
  o.max_startup_share = 0.125;
  o.max_unit_seconds = 4;
  o.units_per_slot = 2;
  o.first_per_unit = 2;
  return o;
}

TEST(UnitPlannerTest, BeforeAnyCompileTimeItUsesTheFirstSizeWithinTheBatch) {
  UnitPlanner planner(options());
  EXPECT_EQ(planner.candidate_seconds(), 0);
  EXPECT_EQ(planner.per_unit(16, 2), 2u);
  // 3 candidates on 2 compilers: one per unit, so that both compilers work.
  EXPECT_EQ(planner.per_unit(3, 2), 1u);
  EXPECT_EQ(planner.per_unit(0, 2), 1u);
}

TEST(UnitPlannerTest, CheapCandidatesShareUnitsToAmortizeStartUp) {
  UnitPlanner planner(options());
  // 8 candidates in 1.25 s: 0.125 s each after 0.25 s of start-up.
  planner.observe(8, 1.25);
  EXPECT_DOUBLE_EQ(planner.candidate_seconds(), 0.125);
  // Start-up at most 12.5 % of a unit: 16 candidates per unit (well within 4 s) ...
  EXPECT_EQ(planner.per_unit(1000, 2), 16u);
  // ... but 32 candidates on 2 compilers make 4 units.
  EXPECT_EQ(planner.per_unit(32, 2), 8u);
  EXPECT_EQ(planner.per_unit(32, 4), 4u);
}

TEST(UnitPlannerTest, SlowCandidatesGetUnitsOfTheirOwn) {
  UnitPlanner planner(options());
  planner.observe(2, 10.25);  // 5 s a candidate: more than a unit should take
  EXPECT_EQ(planner.per_unit(64, 2), 1u);
  // A candidate of 1.5 s: two fit in the 4 s a unit may take.
  UnitPlanner medium(options());
  medium.observe(1, 1.75);
  EXPECT_EQ(medium.per_unit(64, 2), 2u);
}

TEST(UnitPlannerTest, TheEstimateFollowsRecentUnits) {
  UnitPlanner planner(options());
  planner.observe(1, 0.375);  // 0.125 s
  planner.observe(1, 5.25);   // 5 s
  EXPECT_GT(planner.candidate_seconds(), 0.125);
  EXPECT_LT(planner.candidate_seconds(), 5);
  for (int i = 0; i < 20; ++i) planner.observe(1, 5.25);
  EXPECT_NEAR(planner.candidate_seconds(), 5, 0.01);
  EXPECT_EQ(planner.per_unit(64, 2), 1u);
  // A unit faster than the start-up still counts as some work, and bad input is ignored.
  UnitPlanner fast(options());
  fast.observe(4, 0.05);
  EXPECT_GT(fast.candidate_seconds(), 0);
  fast.observe(0, 1.0);
  fast.observe(2, -1.0);
  EXPECT_DOUBLE_EQ(fast.candidate_seconds(), 1e-3);
}

}  // namespace
}  // namespace ansor
