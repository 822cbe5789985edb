// What each step kind says about itself, without a State: its JSON form both ways (through the
// registry of step_kind.def), the stage and loops it names, their renumbering (remap_loops),
// whether it places its stage or inserts one; and the registry's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "schedule/steps.h"

namespace ansor {
namespace {

using ::testing::HasSubstr;

// One record of each kind, as cache/ holds them.
const char* const kOnePerKind[] = {
    R"j({"kind": "split", "stage": 2, "iter": 1, "lengths": [4, 0, 8]})j",
    R"j({"kind": "follow_split", "stage": 3, "iter": 2, "src_step": 1, "n_split": 2})j",
    R"j({"kind": "follow_fused_split", "stage": 3, "iter": 4, "src_steps": [1, 2], "level": 1})j",
    R"j({"kind": "reorder", "stage": 2, "order": [2, 0, 1]})j",
    R"j({"kind": "fuse", "stage": 2, "iters": [1, 2, 3]})j",
    R"j({"kind": "annotate", "stage": 2, "iter": 3, "annotation": "vectorize"})j",
    R"j({"kind": "pragma", "stage": 2, "iter": 0, "prefetch_bytes": 2048})j",
    R"j({"kind": "storage_align", "stage": 1, "axis": 0, "factor": 32, "offset": 1})j",
    R"j({"kind": "compute_at", "stage": 1, "target_stage": 3, "target_iter": 2})j",
    R"j({"kind": "compute_inline", "stage": 4})j",
    R"j({"kind": "compute_root", "stage": 1})j",
    R"j({"kind": "cache_read", "stage": 0, "scope": "shared", "readers": [3]})j",
    R"j({"kind": "cache_write", "stage": 2, "scope": "local"})j",
    R"j({"kind": "rfactor", "stage": 2, "iter": 3, "factor_axis": 1})j",
    R"j({"kind": "layout_rewrite", "stage": 1})j",
};

StepPtr parse(const char* text) { return step_from_json(nlohmann::json::parse(text)); }

// p -> p + 1 for the loops from `from` on.
auto shift_from(int from) {
  return [from](int p) { return p >= from ? p + 1 : p; };
}

TEST(StepKindsTest, EveryKindOfTheTableParsesItselfBackToTheSameJson) {
  std::vector<std::string_view> table = {
#define STEP_KIND(Enum, name, Class) name,
#include "schedule/step_kind.def"
  };
  ASSERT_EQ(std::size(kOnePerKind), table.size()) << "a record of each kind of step_kind.def";
  std::set<std::string_view> seen;
  for (const char* text : kOnePerKind) {
    nlohmann::json j = nlohmann::json::parse(text);
    StepPtr step = step_from_json(j);
    EXPECT_EQ(step->to_json(), j) << text;
    EXPECT_EQ(step_kind_name(step->kind()), j.at("kind").get<std::string>());
    EXPECT_EQ(step->stage, j.at("stage").get<int>());
    seen.insert(step_kind_name(step->kind()));
  }
  EXPECT_EQ(seen, std::set<std::string_view>(table.begin(), table.end()));
}

TEST(StepKindsTest, RegistryErrorsNameTheKindAndTheField) {
  try {
    parse(R"j({"kind": "tensorize", "stage": 0})j");
    FAIL() << "no error";
  } catch (const StepError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown step kind 'tensorize'"));
  }
  try {
    parse(R"j({"kind": "compute_at", "stage": 0, "target_stage": 1})j");
    FAIL() << "no error";
  } catch (const StepError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a compute_at step needs the field 'target_iter'"));
  }
  EXPECT_THROW(parse(R"j({"kind": "cache_write", "stage": 0, "scope": "texture"})j"), StepError);
  EXPECT_THROW(parse(R"j({"kind": "fuse", "stage": 0, "iters": [0, -1]})j"), StepError);
}

TEST(StepKindsTest, LoopsNamedByEachKind) {
  auto loops = [](const char* text) {
    std::vector<std::pair<int, int>> out;
    for (const LoopRef& l : parse(text)->loops()) out.emplace_back(l.stage, l.iter);
    return out;
  };
  using Loops = std::vector<std::pair<int, int>>;
  EXPECT_EQ(loops(kOnePerKind[0]), (Loops{{2, 1}}));                  // split
  EXPECT_EQ(loops(kOnePerKind[1]), (Loops{{3, 2}}));                  // follow_split
  EXPECT_EQ(loops(kOnePerKind[2]), (Loops{{3, 4}}));                  // follow_fused_split
  EXPECT_EQ(loops(kOnePerKind[3]), (Loops{{2, 2}, {2, 0}, {2, 1}}));  // reorder: all of them
  EXPECT_EQ(loops(kOnePerKind[4]), (Loops{{2, 1}, {2, 2}, {2, 3}}));  // fuse
  EXPECT_EQ(loops(kOnePerKind[5]), (Loops{{2, 3}}));                  // annotate
  EXPECT_EQ(loops(kOnePerKind[6]), (Loops{{2, 0}}));                  // pragma
  EXPECT_EQ(loops(kOnePerKind[7]), Loops{});                          // storage_align names a dimension
  EXPECT_EQ(loops(kOnePerKind[8]), (Loops{{3, 2}}));                  // compute_at: the target's loop
  for (int k : {9, 10, 11, 12, 14}) EXPECT_EQ(loops(kOnePerKind[k]), Loops{}) << kOnePerKind[k];
  EXPECT_EQ(loops(kOnePerKind[13]), (Loops{{2, 3}}));  // rfactor
}

TEST(StepKindsTest, RemapRenumbersTheLoopsOfOneStage) {
  struct Case {
    const char* step;
    int stage;     // whose loops from position 2 on shift by one
    const char* after;
  };
  const Case cases[] = {
      {kOnePerKind[0], 2, kOnePerKind[0]},  // loop 1 stays
      {R"j({"kind": "split", "stage": 2, "iter": 3, "lengths": [4]})j", 2, R"j({"kind": "split", "stage": 2, "iter": 4, "lengths": [4]})j"},
      {kOnePerKind[1], 3, R"j({"kind": "follow_split", "stage": 3, "iter": 3, "src_step": 1, "n_split": 2})j"},
      {kOnePerKind[2], 3, R"j({"kind": "follow_fused_split", "stage": 3, "iter": 5, "src_steps": [1, 2], "level": 1})j"},
      {kOnePerKind[4], 2, R"j({"kind": "fuse", "stage": 2, "iters": [1, 3, 4]})j"},
      {kOnePerKind[5], 2, R"j({"kind": "annotate", "stage": 2, "iter": 4, "annotation": "vectorize"})j"},
      {R"j({"kind": "pragma", "stage": 2, "iter": 2, "stream_stores": 1})j", 2,
       R"j({"kind": "pragma", "stage": 2, "iter": 3, "stream_stores": 1})j"},
      {kOnePerKind[8], 3, R"j({"kind": "compute_at", "stage": 1, "target_stage": 3, "target_iter": 3})j"},
      {kOnePerKind[8], 1, kOnePerKind[8]},  // its own stage's loops are not named
      {kOnePerKind[13], 2, R"j({"kind": "rfactor", "stage": 2, "iter": 4, "factor_axis": 1})j"},
      {kOnePerKind[5], 3, kOnePerKind[5]},  // another stage's loops
      {kOnePerKind[7], 1, kOnePerKind[7]},
      {kOnePerKind[12], 2, kOnePerKind[12]},
  };
  for (const Case& c : cases) {
    StepPtr step = parse(c.step);
    StepPtr out = remap_loops(step, c.stage, shift_from(2));
    ASSERT_TRUE(out) << c.step;
    EXPECT_EQ(out->to_json(), nlohmann::json::parse(c.after)) << c.step;
    // A step whose loops keep their positions is the same step, not a copy.
    if (out->to_json() == step->to_json()) {
      EXPECT_EQ(out, step) << c.step;
    }
  }
}

TEST(StepKindsTest, RemapDropsStepsWhoseLoopIsGoneAndReorders) {
  auto gone_from_2 = [](int p) { return p >= 2 ? -1 : p; };
  EXPECT_FALSE(remap_loops(parse(kOnePerKind[4]), 2, gone_from_2));  // fuse of loops 1..3
  EXPECT_FALSE(remap_loops(parse(kOnePerKind[5]), 2, gone_from_2));  // annotate loop 3
  EXPECT_FALSE(remap_loops(parse(kOnePerKind[8]), 3, gone_from_2));  // compute_at loop 2
  StepPtr split = parse(kOnePerKind[0]);
  EXPECT_EQ(remap_loops(split, 2, gone_from_2), split);  // loop 1 stays
  // A reorder is a permutation of all its stage's loops: no renumbering keeps it, not even
  // the identity; on another stage it stays.
  StepPtr reorder = parse(kOnePerKind[3]);
  EXPECT_FALSE(remap_loops(reorder, 2, [](int p) { return p; }));
  EXPECT_EQ(remap_loops(reorder, 1, shift_from(0)), reorder);
}

TEST(StepKindsTest, LocationStepsPlaceTheirStage) {
  std::vector<std::string> placing;
  for (const char* text : kOnePerKind)
    if (parse(text)->places_stage()) placing.push_back(std::string(step_kind_name(parse(text)->kind())));
  EXPECT_EQ(placing, (std::vector<std::string>{"compute_at", "compute_inline", "compute_root"}));
}

TEST(StepKindsTest, StepsThatInsertAStageSayWhereAndForWhom) {
  std::vector<std::tuple<std::string, int, int>> inserting;
  for (const char* text : kOnePerKind) {
    StepPtr step = parse(text);
    if (std::optional<InsertedStage> s = step->inserted_stage())
      inserting.emplace_back(std::string(step_kind_name(step->kind())), s->position, s->owner);
  }
  // cache_read of stage 0 for reader 3: the copy follows stage 0 and belongs to the reader;
  // cache_write and rfactor of stage 2: the new stage takes position 2, for stage 2.
  EXPECT_EQ(inserting, (std::vector<std::tuple<std::string, int, int>>{{"cache_read", 1, 3}, {"cache_write", 2, 2}, {"rfactor", 2, 2}}));
}

}  // namespace
}  // namespace ansor
