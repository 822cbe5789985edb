// Transform steps, one by one: what each does to a State, the uses each rejects (leaving the
// state unchanged), JSON round trips, and replay of a step list reproducing the State.
#include "schedule/steps.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dag_builder.h"
#include "schedule/bound_inference.h"
#include "schedule/state.h"

namespace ansor {
namespace {

// mm: C[i:64, j:32] = sum(k:48, A[i, k] * B[k, j]) with B const; conv: Y = relu(conv2d_nchw(X,
// W, pad = 1)) over X f32[1, 4, 8, 8] and W const f32[8, 4, 3, 3].
std::shared_ptr<const ComputeDAG> kernel_dag(const std::string& kernel) {
  if (kernel == "mm")
    return test::DagBuilder()
        .input("A", {64, 48})
        .constant("B", {48, 32})
        .sum(
            "C", {64, 32}, {48}, [](const auto& ij, const auto& k) { return mul(load("A", DType::F32, {ij[0], k[0]}), load("B", DType::F32, {k[0], ij[1]})); },
            {"i", "j"}, {"k"})
        .build();
  return test::DagBuilder()
      .input("X", {1, 4, 8, 8})
      .constant("W", {8, 4, 3, 3})
      .pad2d("Y.pad", "X", 1)
      .conv2d("Y.conv2d", "Y.pad", "W")
      .relu("Y", "Y.conv2d")
      .build();
}

class StepsTest : public ::testing::Test {
 protected:
  State initial(const std::string& kernel) { return State(kernel_dag(kernel)); }

  static std::vector<std::string> leaf_names(const State& s, int stage) {
    std::vector<std::string> names;
    for (int leaf : s.stage(stage).leaves) names.push_back(s.stage(stage).iters[leaf].name);
    return names;
  }

  static std::vector<int64_t> leaf_extents(const State& s, int stage) {
    std::vector<int64_t> extents;
    for (int leaf : s.stage(stage).leaves) extents.push_back(s.stage(stage).iters[leaf].extent);
    return extents;
  }

  // Applying `step` throws StepError and leaves the state as it was.
  static void expect_rejected(State& s, const StepPtr& step) {
    std::string before = s.signature();
    size_t steps = s.steps().size();
    EXPECT_THROW(s.apply(step), StepError) << step->to_json().dump();
    EXPECT_EQ(s.signature(), before);
    EXPECT_EQ(s.steps().size(), steps);
  }

  // JSON round trip and replay of every step so far.
  static void expect_round_trip(const State& s) {
    std::vector<StepPtr> parsed;
    for (const StepPtr& step : s.steps()) {
      nlohmann::json j = step->to_json();
      StepPtr back = step_from_json(nlohmann::json::parse(j.dump()));
      EXPECT_EQ(back->to_json(), j);
      parsed.push_back(back);
    }
    State replayed = replay(s.dag_ptr(), parsed);
    EXPECT_EQ(replayed.signature(), s.signature());
    EXPECT_TRUE(replayed == s);
    EXPECT_EQ(replayed.hash(), s.hash());
  }
};

TEST_F(StepsTest, SplitCreatesInnerLoopsFromInnermost) {
  State s = initial("mm");
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{4, 2}));
  EXPECT_EQ(leaf_names(s, 2), (std::vector<std::string>{"i.0", "i.1", "i.2", "j", "k"}));
  EXPECT_EQ(leaf_extents(s, 2), (std::vector<int64_t>{8, 4, 2, 32, 48}));
  // Ragged: 32 = 5 * 7 - 3; the last part is guarded when lowered.
  s.apply(std::make_shared<SplitStep>(2, 3, std::vector<int64_t>{5}));
  EXPECT_EQ(leaf_extents(s, 2), (std::vector<int64_t>{8, 4, 2, 7, 5, 48}));
  expect_round_trip(s);
}

TEST_F(StepsTest, SplitRejects) {
  State s = initial("mm");
  expect_rejected(s, std::make_shared<SplitStep>(0, 0, std::vector<int64_t>{2}));   // an input
  expect_rejected(s, std::make_shared<SplitStep>(2, 3, std::vector<int64_t>{2}));   // no loop 3
  expect_rejected(s, std::make_shared<SplitStep>(9, 0, std::vector<int64_t>{2}));   // no stage 9
  expect_rejected(s, std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{}));    // no lengths
  expect_rejected(s, std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{-2}));  // negative
  s.apply(std::make_shared<AnnotateStep>(2, 0, IterAnnotation::Parallel));
  expect_rejected(s, std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{2}));  // annotated
}

// (lower/guard_test.cpp checks that such a state does not lower.)
TEST_F(StepsTest, UndecidedLengthsPrint) {
  State s = initial("mm");
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{0, 4}));
  EXPECT_NE(describe_steps(s).find("split(C, i, [?, 4])"), std::string::npos) << describe_steps(s);
}

TEST_F(StepsTest, FollowSplitCopiesLengthsAndMultipliesTheRest) {
  State s = initial("mm");
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{2, 4, 2}));
  s.apply(std::make_shared<FollowSplitStep>(2, 4, 0, 2));  // j with [2, 4 * 2]
  EXPECT_EQ(leaf_names(s, 2), (std::vector<std::string>{"i.0", "i.1", "i.2", "i.3", "j.0", "j.1", "j.2", "k"}));
  EXPECT_EQ(leaf_extents(s, 2), (std::vector<int64_t>{4, 2, 4, 2, 2, 2, 8, 48}));
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<FollowSplitStep>(2, 7, 0, 4));  // n_split too large
  expect_rejected(s, std::make_shared<FollowSplitStep>(2, 7, 1, 1));  // step 1 is not a split
  expect_rejected(s, std::make_shared<FollowSplitStep>(2, 7, 5, 1));  // no step 5
}

TEST_F(StepsTest, FollowFusedSplitMultipliesOneLevel) {
  State s = initial("mm");
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{4}));  // i: 16 x 4
  s.apply(std::make_shared<SplitStep>(2, 2, std::vector<int64_t>{2}));  // j: 16 x 2
  s.apply(std::make_shared<FollowFusedSplitStep>(2, 4, std::vector<int>{0, 1}, 0));  // k by 4 * 2
  EXPECT_EQ(leaf_extents(s, 2), (std::vector<int64_t>{16, 4, 16, 2, 6, 8}));
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<FollowFusedSplitStep>(2, 0, std::vector<int>{0}, 1));  // no length 1
}

TEST_F(StepsTest, ReorderPermutesLoops) {
  State s = initial("mm");
  s.apply(std::make_shared<ReorderStep>(2, std::vector<int>{2, 0, 1}));
  EXPECT_EQ(leaf_names(s, 2), (std::vector<std::string>{"k", "i", "j"}));
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<ReorderStep>(2, std::vector<int>{0, 0, 1}));
  expect_rejected(s, std::make_shared<ReorderStep>(2, std::vector<int>{0, 1}));
}

TEST_F(StepsTest, FuseMakesOneLoopOfConsecutiveLoops) {
  State s = initial("mm");
  s.apply(std::make_shared<FuseStep>(2, std::vector<int>{0, 1}));
  EXPECT_EQ(leaf_names(s, 2), (std::vector<std::string>{"i@j", "k"}));
  EXPECT_EQ(leaf_extents(s, 2), (std::vector<int64_t>{64 * 32, 48}));
  EXPECT_EQ(s.stage(2).leaf(0).kind, IterKind::Spatial);
  s.apply(std::make_shared<FuseStep>(2, std::vector<int>{0, 1}));
  EXPECT_EQ(s.stage(2).leaf(0).kind, IterKind::Mixed);
  expect_round_trip(s);
  State t = initial("mm");
  expect_rejected(t, std::make_shared<FuseStep>(2, std::vector<int>{0, 2}));  // not consecutive
  expect_rejected(t, std::make_shared<FuseStep>(2, std::vector<int>{}));
}

TEST_F(StepsTest, AnnotateRejectsRacesAndDoubleAnnotation) {
  State s = initial("mm");
  s.apply(std::make_shared<AnnotateStep>(2, 0, IterAnnotation::Parallel));
  s.apply(std::make_shared<AnnotateStep>(2, 1, IterAnnotation::Vectorize));
  s.apply(std::make_shared<AnnotateStep>(2, 2, IterAnnotation::Unroll));
  EXPECT_EQ(s.stage(2).leaf(0).annotation, IterAnnotation::Parallel);
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<AnnotateStep>(2, 0, IterAnnotation::Unroll));  // already annotated
  State t = initial("mm");
  expect_rejected(t, std::make_shared<AnnotateStep>(2, 2, IterAnnotation::Parallel));  // reduction loop
  expect_rejected(t, std::make_shared<AnnotateStep>(2, 2, IterAnnotation::ThreadY));
  expect_rejected(t, std::make_shared<AnnotateStep>(2, 2, IterAnnotation::BlockX));
  expect_rejected(t, std::make_shared<AnnotateStep>(2, 0, IterAnnotation::None));
  // A reduction loop on threadIdx.x: the block's threads combine their values.
  t.apply(std::make_shared<AnnotateStep>(2, 2, IterAnnotation::ThreadX));
  EXPECT_EQ(t.stage(2).leaf(2).annotation, IterAnnotation::ThreadX);
}

TEST_F(StepsTest, PragmaAndStorageAlignSetStageAttributes) {
  State s = initial("mm");
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 64));
  s.apply(std::make_shared<StorageAlignStep>(2, 0, 16, 4));
  EXPECT_EQ(s.stage(2).pragma(PragmaKind::AutoUnrollMaxStep), 64);
  EXPECT_EQ(s.stage(2).align_dim, 0);
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<PragmaStep>(2, 0, PragmaKind::AutoUnrollMaxStep, 100000));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::PrefetchBytes, 2048));
  s.apply(std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 1));
  EXPECT_EQ(s.stage(2).pragma(PragmaKind::PrefetchBytes), 2048);
  EXPECT_EQ(s.stage(2).pragma(PragmaKind::StreamStores), 1);
  EXPECT_EQ(s.stage(2).pragma(PragmaKind::AutoUnrollMaxStep), 64);
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<PragmaStep>(2, 0, PragmaKind::PrefetchBytes, 20000));
  expect_rejected(s, std::make_shared<PragmaStep>(2, 0, PragmaKind::StreamStores, 2));
  expect_rejected(s, std::make_shared<StorageAlignStep>(2, 2, 16, 4));  // C has two dimensions
  expect_rejected(s, std::make_shared<StorageAlignStep>(2, 0, 16, 16));
}

// stream_stores writes around the caches, so only into a kernel output nothing reads back.
TEST_F(StepsTest, StreamStoresOnlyIntoAKernelOutput) {
  State s = initial("conv");
  const int relu = s.num_stages() - 1;
  expect_rejected(s, std::make_shared<PragmaStep>(relu - 1, 0, PragmaKind::StreamStores, 1));
  s.apply(std::make_shared<PragmaStep>(relu - 1, 0, PragmaKind::PrefetchBytes, 1024));
  s.apply(std::make_shared<PragmaStep>(relu, 0, PragmaKind::StreamStores, 1));
  EXPECT_EQ(s.stage(relu).pragma(PragmaKind::StreamStores), 1);
  EXPECT_EQ(s.stage(relu - 1).pragma(PragmaKind::PrefetchBytes), 1024);
}

TEST_F(StepsTest, ComputeAtInlineAndRoot) {
  State s = initial("conv");
  int pad = s.find_stage("Y.pad"), conv = s.find_stage("Y.conv2d"), relu = s.find_stage("Y");
  s.apply(std::make_shared<ComputeAtStep>(pad, conv, 1));
  EXPECT_EQ(s.stage(pad).location, ComputeLocation::At);
  EXPECT_EQ(s.stage(pad).attach_stage, conv);
  infer_bounds(s);
  // One output channel (f) at a time still needs every input channel and row of the padding.
  EXPECT_EQ(leaf_extents(s, pad), (std::vector<int64_t>{1, 4, 10, 10}));
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<ComputeInlineStep>(conv));       // a reduction
  expect_rejected(s, std::make_shared<ComputeAtStep>(relu, conv, 0));  // an output
  expect_rejected(s, std::make_shared<ComputeAtStep>(pad, relu, 0));   // relu does not read the padding
  s.apply(std::make_shared<ComputeRootStep>(pad));
  s.apply(std::make_shared<ComputeInlineStep>(pad));
  EXPECT_EQ(s.stage(pad).location, ComputeLocation::Inlined);
  expect_round_trip(s);
}

TEST_F(StepsTest, NothingIsComputedInsideATensorizedLoop) {
  State s = initial("conv");
  int pad = s.find_stage("Y.pad"), conv = s.find_stage("Y.conv2d");
  s.apply(std::make_shared<AnnotateStep>(conv, 3, IterAnnotation::Tensorize));
  expect_rejected(s, std::make_shared<ComputeAtStep>(pad, conv, 3));
  expect_rejected(s, std::make_shared<ComputeAtStep>(pad, conv, 5));
  s.apply(std::make_shared<ComputeAtStep>(pad, conv, 2));
  EXPECT_EQ(s.stage(pad).location, ComputeLocation::At);
}

TEST_F(StepsTest, SplittingTheAttachLoopKeepsStagesInsideTheInnermostPart) {
  State s = initial("conv");
  int pad = s.find_stage("Y.pad"), conv = s.find_stage("Y.conv2d");
  s.apply(std::make_shared<ComputeAtStep>(pad, conv, 2));  // inside loop y
  s.apply(std::make_shared<SplitStep>(conv, 2, std::vector<int64_t>{4}));
  EXPECT_EQ(s.stage(conv).iters[s.stage(pad).attach_iter].name, "i2.1");
  s.apply(std::make_shared<FuseStep>(conv, std::vector<int>{2, 3}));
  EXPECT_EQ(s.stage(conv).iters[s.stage(pad).attach_iter].name, "i2.0@i2.1");
  expect_round_trip(s);
}

TEST_F(StepsTest, CacheReadAndCacheWriteInsertStages) {
  State s = initial("mm");
  s.apply(std::make_shared<CacheWriteStep>(2, MemoryScope::Local));
  ASSERT_EQ(s.num_stages(), 4);
  EXPECT_EQ(s.stage(2).op->name, "C.local");
  EXPECT_EQ(s.stage(3).op->name, "C");
  EXPECT_TRUE(s.stage(2).op->reduction());
  EXPECT_FALSE(s.stage(3).op->reduction());
  s.apply(std::make_shared<CacheReadStep>(0, MemoryScope::Shared, std::vector<int>{2}));
  ASSERT_EQ(s.num_stages(), 5);
  EXPECT_EQ(s.stage(1).op->name, "A.shared");
  EXPECT_EQ(s.stage(1).scope, MemoryScope::Shared);
  EXPECT_EQ(s.readers(1), (std::vector<int>{3}));
  expect_round_trip(s);
  expect_rejected(s, std::make_shared<CacheReadStep>(0, MemoryScope::Local, std::vector<int>{4}));  // C does not read A
  State t = initial("mm");
  t.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{2}));
  expect_rejected(t, std::make_shared<CacheWriteStep>(2, MemoryScope::Local));  // already split
}

TEST_F(StepsTest, RfactorSplitsAReduction) {
  State s = initial("mm");
  s.apply(std::make_shared<SplitStep>(2, 2, std::vector<int64_t>{8}));
  s.apply(std::make_shared<RfactorStep>(2, 3, 0));
  ASSERT_EQ(s.num_stages(), 4);
  EXPECT_EQ(s.stage(2).op->name, "C.rf");
  EXPECT_EQ(s.stage(2).op->shape, (std::vector<int64_t>{8, 64, 32}));
  EXPECT_EQ(s.stage(3).op->reduction()->axes.size(), 1u);
  expect_round_trip(s);
  State t = initial("mm");
  expect_rejected(t, std::make_shared<RfactorStep>(2, 0, 0));  // a spatial loop
  t.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{8}));
  expect_rejected(t, std::make_shared<RfactorStep>(2, 3, 0));  // spatial loops already split
}

TEST_F(StepsTest, LayoutRewriteOnlyForInputs) {
  State s = initial("mm");
  expect_rejected(s, std::make_shared<LayoutRewriteStep>(2));  // C is not an input
  s.apply(std::make_shared<LayoutRewriteStep>(1));             // B, const: packed by the caller
  s.apply(std::make_shared<LayoutRewriteStep>(0));             // A: packed by the kernel
  EXPECT_TRUE(s.stage(0).layout_rewrite);
  EXPECT_TRUE(s.stage(1).layout_rewrite);
  expect_round_trip(s);
}

TEST_F(StepsTest, AttachmentsStayValidWhenReadersChange) {
  State s = initial("conv");
  int pad = s.find_stage("Y.pad"), conv = s.find_stage("Y.conv2d");
  s.apply(std::make_shared<ComputeAtStep>(pad, conv, 1));
  // A cache stage between the padding and the convolution would read it outside the loop.
  expect_rejected(s, std::make_shared<CacheReadStep>(pad, MemoryScope::Local, std::vector<int>{conv}));
}

TEST_F(StepsTest, EqualStructuresCompareEqualWhateverTheSteps) {
  State a = initial("mm"), b = initial("mm");
  a.apply(std::make_shared<ReorderStep>(2, std::vector<int>{1, 0, 2}));
  a.apply(std::make_shared<ReorderStep>(2, std::vector<int>{1, 0, 2}));
  EXPECT_TRUE(a == b);
  b.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{8}));
  EXPECT_FALSE(a == b);
}

TEST(StepJsonTest, RejectsMalformedAndHostileRecords) {
  const char* bad[] = {
      R"j([1, 2])j",
      R"j({"kind": "nonsense", "stage": 0})j",
      R"j({"kind": "split", "stage": 0, "iter": 0})j",
      R"j({"kind": "split", "stage": 0, "iter": 0, "lengths": "8"})j",
      R"j({"kind": "split", "stage": -1, "iter": 0, "lengths": [8]})j",
      R"j({"kind": "split", "stage": 0, "iter": 0, "lengths": [1e30]})j",
      R"j({"kind": "split", "stage": 0, "iter": 0, "lengths": [99999999999999999]})j",
      R"j({"kind": "split", "stage": 0, "iter": 0, "lengths": [8], "extra": 1})j",
      R"j({"kind": "annotate", "stage": 0, "iter": 0, "annotation": "__asm__(\"int3\")"})j",
      R"j({"kind": "cache_read", "stage": 0, "scope": "global; system(\"rm -rf /\")", "readers": [1]})j",
      R"j({"kind": "pragma", "stage": 0, "iter": 0, "auto_unroll_max_step": 1000000})j",
      R"j({"kind": "pragma", "stage": 0, "iter": 0})j",
      R"j({"kind": "pragma", "stage": 0, "iter": 0, "vectorize_everything": 1})j",
      R"j({"kind": "pragma", "stage": 0, "iter": 0, "prefetch_bytes": 512, "stream_stores": 1})j",
      R"j({"kind": "pragma", "stage": 0, "iter": 0, "stream_stores": 3})j",
      R"j({"kind": "reorder", "stage": 0, "order": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64]})j",
      R"j({"kind": 7})j",
  };
  for (const char* text : bad) EXPECT_THROW(step_from_json(nlohmann::json::parse(text)), StepError) << text;
}

}  // namespace
}  // namespace ansor
