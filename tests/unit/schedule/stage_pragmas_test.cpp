// Stage pragmas as a keyed map (Stage::pragmas): only those that are on are kept, so a pragma
// set back to 0 leaves the state as if never set; every row of pragma_kind.def is read from its
// table; cache_write hands the stage's pragmas to the stage that stores the tensor; the printer
// shows an on/off pragma by its name alone.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dag/dag_text.h"
#include "schedule/state.h"
#include "schedule/state_printer.h"
#include "schedule/steps.h"

namespace ansor {
namespace {

// T2 = T0 x T1: stage 2 stores the kernel output, which no stage reads.
State matmul() {
  return State(std::make_shared<const ComputeDAG>(parse_canonical_dag(
      "T0 = input f32[64, 48]\nT1 = input f32[48, 32]\nT2[i0:64, i1:32] = f32(sum(r0:48, T0[i0, r0] * T1[r0, i1]))\noutputs T2\n")));
}

TEST(StagePragmasTest, OnlyPragmasThatAreOnAreKept) {
  State s = matmul();
  const State initial = s;
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 64));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 1));
  EXPECT_EQ(s.stage(2).pragmas, (std::map<PragmaKind, int>{{PragmaKind::AutoUnrollMaxStep, 64}, {PragmaKind::StreamStores, 1}}));
  EXPECT_EQ(s.stage(2).pragma(PragmaKind::PrefetchBytes), 0);
  EXPECT_FALSE(s == initial);
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 0));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 0));
  EXPECT_TRUE(s.stage(2).pragmas.empty());
  EXPECT_TRUE(s == initial);
}

TEST(StagePragmasTest, EveryRowOfTheTable) {
  struct Row {
    PragmaKind kind;
    std::string_view name;
    int64_t max_value;
    bool unread_output_only;
  };
  const Row rows[] = {
#define PRAGMA_KIND(Enum, name, max_value, unread_output_only) {PragmaKind::Enum, name, max_value, unread_output_only},
#include "schedule/pragma_kind.def"
  };
  for (const Row& row : rows) {
    PragmaKind parsed;
    ASSERT_TRUE(parse_pragma(row.name, parsed)) << row.name;
    EXPECT_EQ(parsed, row.kind);
    EXPECT_EQ(pragma_name(row.kind), row.name);
    EXPECT_EQ(pragma_max_value(row.kind), row.max_value);
    EXPECT_EQ(pragma_needs_unread_output(row.kind), row.unread_output_only);
  }
  EXPECT_TRUE(pragma_needs_unread_output(PragmaKind::StreamStores));
  PragmaKind unused;
  EXPECT_FALSE(parse_pragma("prefetch", unused));
}

TEST(StagePragmasTest, UnreadOutputOnlyPragmasNeedAKernelOutputThatNothingReads) {
  State s = matmul();
  s.apply(std::make_shared<CacheWriteStep>(2, MemoryScope::Local));  // T2.local: read by T2
  EXPECT_THROW(s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 1)), StepError);
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 0));  // off is always allowed
  s.apply(std::make_shared<PragmaStep>(3, 0, PragmaKind::StreamStores, 1));
  EXPECT_EQ(s.stage(3).pragma(PragmaKind::StreamStores), 1);
}

TEST(StagePragmasTest, CacheWriteHandsThePragmasToTheStageThatStoresTheTensor) {
  State s = matmul();
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 16));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 1));
  s.apply(std::make_shared<CacheWriteStep>(2, MemoryScope::Local));
  ASSERT_EQ(s.stage(3).op->name, "T2");
  EXPECT_EQ(s.stage(3).pragmas, (std::map<PragmaKind, int>{{PragmaKind::AutoUnrollMaxStep, 16}, {PragmaKind::StreamStores, 1}}));
  EXPECT_TRUE(s.stage(2).pragmas.empty());
}

TEST(StagePragmasTest, PrinterShowsValuesAndOnOffPragmasByName) {
  State s = matmul();
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 16));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::PrefetchBytes, 512));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 1));
  const std::string head = "inputs: T0, T1\nT2 auto_unroll_max_step = 16\nT2 prefetch_bytes = 512\nT2 stream_stores\nfor i0 in 0..64\n";
  EXPECT_EQ(state_to_string(s).substr(0, head.size()), head);
}

}  // namespace
}  // namespace ansor
