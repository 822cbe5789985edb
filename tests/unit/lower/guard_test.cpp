// Guards of ragged splits: each condition once, however many splits require it.
#include <gtest/gtest.h>

#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "dag_builder.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(GuardTest, ASplitOfASplitsPartGuardsItsLoopsOnce) {
  // Y[i:6, j:10] = X[i, j] * 2.0
  auto dag = test::DagBuilder()
                 .input("X", {6, 10})
                 .compute("Y", {6, 10}, [](const auto& ij) { return mul(load("X", DType::F32, ij), float_imm(2.0)); }, {"i", "j"})
                 .build();
  constexpr int kY = 1;
  State s(dag);
  // j = j.0 * 10 + j.1 * 10 + j.2 (j.0 and j.1 of one iteration), then j.2 = 4 x 3 > 10: both
  // splits require j.2.0 * 3 + j.2.1 < 10.
  s.apply(std::make_shared<SplitStep>(kY, 1, std::vector<int64_t>{1, 10}));
  s.apply(std::make_shared<SplitStep>(kY, 3, std::vector<int64_t>{3}));
  // As scheduled: the compiled program also tests the guard once more, where it unswitches
  // the ragged last tile.
  LowerOptions as_scheduled;
  as_scheduled.expand_unrolled_loops = false;
  std::string text = to_string(lower_state(s, "k", as_scheduled));
  EXPECT_EQ(occurrences(text, "< 10"), 1u) << text;

  LoweredKernel lowered = lower_state(s, "k");

  LoweredKernel naive = lower_state(State(dag), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 3), args = expected;
  interpret(naive, expected);
  interpret(lowered, args);
  EXPECT_EQ(args, expected);
}

// A split whose lengths the sampler has not decided yet prints, but does not lower.
TEST(GuardTest, UndecidedLengthsDoNotLower) {
  auto dag = test::DagBuilder().input("A", {64, 48}).constant("B", {48, 32}).matmul("C", "A", "B").build();
  State s(dag);
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{0, 4}));
  EXPECT_THROW(lower_state(s, "mm"), InvalidState);
}

}  // namespace
}  // namespace ansor
