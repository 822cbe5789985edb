// Guards of ragged splits: each condition once, however many splits require it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

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

// C[8, 40] = A[8, 16] x B[16, 40] with a local accumulator tile of 4 x 16 (columns ragged:
// 40 = 2 x 16 + 8) computed at the output's column tile, 16 columns vectorized; B packed (the
// packed copy is padded with zeros to whole tiles) or read in place.
// With column_tiles = 3, one tile of 48 columns is the whole row, wider than C.
State ragged_accumulator_tiles(bool packed_b, int column_tiles = 1) {
  auto dag = test::DagBuilder().input("A", {8, 16}).constant("B", {16, 40}).matmul("C", "A", "B").build();
  std::string steps = R"([
    {"kind": "cache_write", "scope": "local", "stage": 2},
    {"iter": 0, "kind": "split", "lengths": [1, 1, 4], "stage": 2},
    {"iter": 4, "kind": "split", "lengths": [1, )" + std::to_string(column_tiles) + R"(, 16], "stage": 2},
    {"iter": 8, "kind": "split", "lengths": [8], "stage": 2},
    {"kind": "reorder", "order": [0, 4, 1, 5, 8, 2, 6, 9, 3, 7], "stage": 2},
    {"iter": 0, "kind": "follow_split", "n_split": 2, "src_step": 1, "stage": 3},
    {"iter": 3, "kind": "follow_split", "n_split": 2, "src_step": 2, "stage": 3},
    {"kind": "reorder", "order": [0, 3, 1, 4, 2, 5], "stage": 3},
    {"kind": "compute_at", "stage": 2, "target_iter": 3, "target_stage": 3},
    {"annotation": "vectorize", "iter": 9, "kind": "annotate", "stage": 2},
    {"annotation": "vectorize", "iter": 5, "kind": "annotate", "stage": 3})";
  steps += packed_b ? R"(, {"kind": "layout_rewrite", "stage": 1}])" : "]";
  State s(dag);
  for (const nlohmann::json& j : nlohmann::json::parse(steps)) s.apply(step_from_json(j));
  return s;
}

// The buffers stored under a guard or in a masked vector loop, each once.
std::string guarded_stores(const LoweredKernel& k) {
  std::set<std::string> buffers;
  for_each_stmt(k.body, [&](const Stmt& s) {
    auto* i = s->as<IfThenElseNode>();
    auto* f = s->as<ForNode>();
    Stmt guarded = i && !i->else_case ? i->then_case : f && f->masked() ? f->body : nullptr;
    if (!guarded) return;
    for_each_stmt(guarded, [&](const Stmt& x) {
      if (auto* store = x->as<StoreNode>()) buffers.insert(store->buffer);
    });
  });
  std::string out;
  for (const std::string& b : buffers) out += b + " ";
  return out;
}

// The accumulators of a ragged tile over a packed operand are computed unguarded past the
// tensor's edge: every load stays inside the padded packed copy, and only the copy-out to C
// keeps the guard. Read in place, B has no columns past 40, so the tile stays guarded.
TEST(GuardTest, AccumulatorsOverPaddedOperandsOvershootUnguarded) {
  LowerOptions as_scheduled;
  as_scheduled.expand_unrolled_loops = false;
  EXPECT_EQ(guarded_stores(lower_state(ragged_accumulator_tiles(true), "k", as_scheduled)), "C ");
  const std::string in_place = guarded_stores(lower_state(ragged_accumulator_tiles(false), "k", as_scheduled));
  EXPECT_NE(in_place.find("C.local"), std::string::npos) << in_place;

  LoweredKernel naive = lower_state(State(ragged_accumulator_tiles(true).dag_ptr()), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 3);
  interpret(naive, expected);
  for (bool packed : {true, false}) {
    LoweredKernel k = lower_state(ragged_accumulator_tiles(packed), "k");
    std::vector<std::vector<double>> args = test::packed_args(k, test::random_args(naive, 3));
    EXPECT_EQ(args[1].size(), packed ? 16u * 48u : 16u * 40u);
    interpret(k, args);
    ASSERT_EQ(args.size(), expected.size());
    for (size_t e = 0; e < args.back().size(); ++e) ASSERT_NEAR(args.back()[e], expected.back()[e], 1e-9) << "element " << e;
  }
}

// A tile wider than the tensor (48 columns of C's 40) keeps all of its columns in its local
// buffer, as the tiles at the ragged end of a longer row do, and is computed unguarded.
TEST(GuardTest, ATileWiderThanTheTensorIsComputedWhole) {
  LowerOptions as_scheduled;
  as_scheduled.expand_unrolled_loops = false;
  const LoweredKernel k = lower_state(ragged_accumulator_tiles(true, 3), "k", as_scheduled);
  EXPECT_EQ(guarded_stores(k), "C ") << to_string(k);
  ASSERT_NE(k.find_buffer("C.local"), nullptr);
  EXPECT_EQ(k.find_buffer("C.local")->shape, (std::vector<int64_t>{4, 48}));

  LoweredKernel naive = lower_state(State(ragged_accumulator_tiles(true).dag_ptr()), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 5);
  interpret(naive, expected);
  LoweredKernel compiled = lower_state(ragged_accumulator_tiles(true, 3), "k");
  std::vector<std::vector<double>> args = test::packed_args(compiled, test::random_args(naive, 5));
  interpret(compiled, args);
  for (size_t e = 0; e < args.back().size(); ++e) ASSERT_NEAR(args.back()[e], expected.back()[e], 1e-9) << "element " << e;
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
