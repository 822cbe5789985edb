// Sketch generation: the derivation rules give the structures of the paper's Figure 5 for
// matmul, matmul + relu, a padded convolution and a 2-norm reduction; few sketches for typical
// subgraphs; and rules registered by users take part.
#include "sampler/sketch_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "lang/program.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kSketchKernels = R"(
kernel matmul {
  A = input f32[64, 32]
  B = input f32[32, 48]
  C[i:64, j:48] = sum(k:32, A[i, k] * B[k, j])
}
kernel matmul_relu {
  A = input f32[64, 32]
  B = input f32[32, 48]
  C[i:64, j:48] = sum(k:32, A[i, k] * B[k, j])
  D[i:64, j:48] = max(C[i, j], 0.0)
}
kernel conv_pad {
  X = input f32[1, 8, 14, 14]
  W = const f32[16, 8, 3, 3]
  Y = conv2d_nchw(X, W, pad = 1)
}
kernel norm {
  A = input f32[256, 256]
  S[x:1] = sum(i:256, j:256, A[i, j] * A[i, j])
  N[x:1] = sqrt(S[x])
}
kernel dense_bias_relu {
  X = input f32[16, 64]
  W = const f32[32, 64]
  b = const f32[32]
  Y = relu(bias_add(dense(X, W), b))
}
kernel softmax {
  X = input f32[8, 100]
  Y = softmax(X)
}
kernel layer_norm {
  X = input f32[8, 64]
  g = const f32[64]
  b = const f32[64]
  Y = layer_norm(X, g, b)
}
kernel layer_norm_2d {
  X = input f32[4, 6, 64]
  g = const f32[6, 64]
  b = const f32[6, 64]
  Y = layer_norm(X, g, b, axis = 1)
}
kernel depthwise {
  X = input f32[1, 16, 14, 14]
  W = const f32[16, 1, 3, 3]
  Y = relu(depthwise_conv2d_nchw(X, W, pad = 1))
}
kernel batch_matmul {
  A = input f32[4, 16, 8]
  B = input f32[4, 8, 16]
  C = batch_matmul(A, B)
}
)";

class SketchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = test::parse(kSketchKernels, "sketch_test.def");
    ctx_.parallelism = 2;
  }

  std::vector<Sketch> sketches(const std::string& kernel, const SketchRules& rules) {
    return generate_sketches(std::make_shared<const ComputeDAG>(program_.find(kernel)->dag), ctx_, rules);
  }
  std::vector<Sketch> sketches(const std::string& kernel) { return sketches(kernel, SketchRules::cpu()); }

  static std::vector<std::string> loops(const State& s, const std::string& stage) {
    std::vector<std::string> names;
    const Stage& st = s.stage(s.find_stage(stage));
    for (int leaf : st.leaves) names.push_back(st.iters[leaf].name);
    return names;
  }

  static bool derived_by(const Sketch& sk, const std::string& rule) {
    return std::any_of(sk.derivation.begin(), sk.derivation.end(), [&](const std::string& d) { return d.rfind(rule + "@", 0) == 0; });
  }

  Program program_;
  SamplerContext ctx_;
};

const std::vector<std::string> kSsrsrs = {"i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3"};

TEST_F(SketchTest, MatmulGetsMultiLevelTilingWithAndWithoutACacheStage) {
  std::vector<Sketch> sk = sketches("matmul");
  ASSERT_EQ(sk.size(), 3u);
  int with_cache = 0;
  for (const Sketch& s : sk) {
    if (s.state.find_stage("C.local") < 0) {
      // Figure 5, the plain tiling: SSRSRS on C itself.
      EXPECT_EQ(loops(s.state, "C"), kSsrsrs);
      continue;
    }
    ++with_cache;
    // The accumulation moves into C.local, tiled SSRSRS and computed inside C's outer tiles.
    EXPECT_EQ(loops(s.state, "C.local"), kSsrsrs);
    const Stage& local = s.state.stage(s.state.find_stage("C.local"));
    EXPECT_EQ(local.location, ComputeLocation::At);
    EXPECT_EQ(local.attach_stage, s.state.find_stage("C"));
    EXPECT_EQ(local.scope, MemoryScope::Local);
    EXPECT_TRUE(derived_by(s, "cache-write"));
  }
  EXPECT_EQ(with_cache, 2);  // fused at the first and at the second tile level
}

TEST_F(SketchTest, MatmulReluFusesTheReluIntoTheTiles) {
  std::vector<Sketch> sk = sketches("matmul_relu");
  ASSERT_EQ(sk.size(), 2u);
  std::vector<std::vector<std::string>> consumer_loops;
  for (const Sketch& s : sk) {
    EXPECT_TRUE(derived_by(s, "multi-level-tiling-with-fusion"));
    EXPECT_EQ(loops(s.state, "C"), kSsrsrs);
    const Stage& c = s.state.stage(s.state.find_stage("C"));
    const Stage& d = s.state.stage(s.state.find_stage("D"));
    EXPECT_EQ(c.location, ComputeLocation::At);
    EXPECT_EQ(c.attach_stage, s.state.find_stage("D"));
    consumer_loops.push_back(loops(s.state, "D"));
    // C is computed inside the last outer tile loop of D.
    EXPECT_EQ(d.leaf_position(c.attach_iter) + 1, static_cast<int>(consumer_loops.back().size()) - 2);
  }
  std::vector<std::vector<std::string>> expected = {{"i.0", "j.0", "i.1", "j.1"}, {"i.0", "j.0", "i.1", "j.1", "i.2", "j.2"}};
  std::sort(consumer_loops.begin(), consumer_loops.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
  EXPECT_EQ(consumer_loops, expected);
}

TEST_F(SketchTest, PaddedConvolutionTilesTheConvolutionAndLeavesThePaddingFlexible) {
  std::vector<Sketch> sk = sketches("conv_pad");
  ASSERT_EQ(sk.size(), 3u);
  for (const Sketch& s : sk) {
    const Stage& pad = s.state.stage(s.state.find_stage("Y.pad"));
    EXPECT_EQ(pad.location, ComputeLocation::Root);  // annotation picks its place
    EXPECT_TRUE(pad.relations.empty());
    std::string tiled = s.state.find_stage("Y.local") >= 0 ? "Y.local" : "Y";
    // n has extent 1 and is not split; f, y, x in four levels; rc, ry, rx in two.
    std::vector<std::string> expected = {"i0", "i1.0", "i2.0", "i3.0", "i1.1", "i2.1", "i3.1", "rc.0", "ry.0", "rx.0",
                                         "i1.2", "i2.2", "i3.2", "rc.1", "ry.1", "rx.1", "i1.3", "i2.3", "i3.3"};
    EXPECT_EQ(loops(s.state, tiled), expected);
  }
}

TEST_F(SketchTest, NormReductionGetsRfactorVariants) {
  std::vector<Sketch> sk = sketches("norm");
  ASSERT_EQ(sk.size(), 4u);
  int rfactored = 0;
  for (const Sketch& s : sk) {
    if (s.state.find_stage("S.rf") < 0) continue;
    ++rfactored;
    EXPECT_TRUE(derived_by(s, "rfactor") || derived_by(s, "vector-rfactor"));
    const Stage& rf = s.state.stage(s.state.find_stage("S.rf"));
    // The factored part of the fused reduction is a spatial axis of the partial results.
    EXPECT_EQ(rf.op->axes.size(), 2u);
    EXPECT_EQ(s.state.stage(s.state.find_stage("S")).op->reduction()->axes.size(), 1u);
  }
  EXPECT_EQ(rfactored, 3);  // the inner or the outer part in parallel, or vector lanes of the inner part
}

TEST_F(SketchTest, RowReductionsGetVectorPartialResultsAndFusedRows) {
  std::vector<Sketch> sk = sketches("softmax");
  bool fused = false;
  int vectorised = 0;
  for (const Sketch& s : sk) {
    // The other sketches compute partial results in parallel (rfactor).
    auto vector_rfactor = [&](const std::string& stage) {
      return std::find(s.derivation.begin(), s.derivation.end(), "vector-rfactor@" + stage) != s.derivation.end();
    };
    if (!vector_rfactor("Y.max") || !vector_rfactor("Y.sum")) continue;
    ++vectorised;
    for (const char* reduction : {"Y.max", "Y.sum"}) {
      // Partial results per lane: the reduction's lanes are the partial stage's innermost loop.
      ASSERT_GE(s.state.find_stage(std::string(reduction) + ".rf"), 0);
      const Stage& rf = s.state.stage(s.state.find_stage(std::string(reduction) + ".rf"));
      EXPECT_EQ(rf.leaf(static_cast<int>(rf.leaves.size()) - 1).kind, IterKind::Spatial);
      // Rows of 100 = 4 lanes x 25: five vectors of partial results, five chains of five steps.
      EXPECT_EQ(rf.op->axes.back().extent, 20);
      EXPECT_EQ(rf.attach_stage, s.state.find_stage(reduction));
    }
    const Stage& sum = s.state.stage(s.state.find_stage("Y.sum"));
    const Stage& exp = s.state.stage(s.state.find_stage("Y.exp"));
    const Stage& max = s.state.stage(s.state.find_stage("Y.max"));
    int y = s.state.find_stage("Y");
    fused |= sum.attach_stage == y && exp.attach_stage == y && max.attach_stage == s.state.find_stage("Y.exp") &&
             s.state.stage(y).iters[sum.attach_iter].name == "i0";
  }
  EXPECT_GT(vectorised, 0);
  EXPECT_TRUE(fused);  // every pass of a row computed inside the output's row loop
}

TEST_F(SketchTest, ElementwiseStagesAreInlinedIntoTheirConsumers) {
  for (const Sketch& s : sketches("dense_bias_relu")) {
    EXPECT_EQ(s.state.stage(s.state.find_stage("Y.bias_add")).location, ComputeLocation::Inlined);
    EXPECT_TRUE(derived_by(s, "multi-level-tiling-with-fusion"));  // dense fused into the relu
  }
}

TEST_F(SketchTest, TypicalSubgraphsGiveFewSketches) {
  for (const Kernel& k : program_.kernels) {
    size_t n = sketches(k.name).size();
    EXPECT_GE(n, 1u) << k.name;
    EXPECT_LT(n, 10u) << k.name;
    ctx_.gpu = true;
    n = sketches(k.name, SketchRules::gpu()).size();
    EXPECT_GE(n, 1u) << k.name;
    EXPECT_LT(n, 10u) << k.name;
    ctx_.gpu = false;
  }
}

TEST_F(SketchTest, GpuTilingIsSsssrrsrsWithSharedMemoryReads) {
  ctx_.gpu = true;
  std::vector<Sketch> sk = sketches("matmul", SketchRules::gpu());
  bool shared = false;
  for (const Sketch& s : sk) {
    int tiled = s.state.find_stage("C.local") >= 0 ? s.state.find_stage("C.local") : s.state.find_stage("C");
    std::vector<std::string> expected = {"i.0", "j.0", "i.1", "j.1", "i.2", "j.2", "k.0", "k.1", "i.3", "j.3", "k.2", "i.4", "j.4"};
    EXPECT_EQ(loops(s.state, s.state.stage(tiled).op->name), expected);
    int a_shared = s.state.find_stage("A.shared");
    if (a_shared < 0) continue;
    shared = true;
    const Stage& cache = s.state.stage(a_shared);
    EXPECT_EQ(cache.scope, MemoryScope::Shared);
    EXPECT_EQ(cache.attach_stage, tiled);
    EXPECT_EQ(s.state.stage(tiled).iters[cache.attach_iter].name, "k.0");
  }
  EXPECT_TRUE(shared);
}

// On GPUs every elementwise stage is inlined, costly or not; each reduction of a normalisation
// is reduced across threads, at the root or inside the block of its consumer, one block per row
// (of one axis or several) with the row across its threads. The reductions fused into one block
// split their threads as the first of them did.
TEST_F(SketchTest, GpuNormalisationsReduceAcrossThreadsWithinTheBlockOfTheirRow) {
  ctx_.gpu = true;
  const std::map<std::string, std::pair<std::string, std::string>> reductions = {
      {"softmax", {"Y.sum", "Y.max"}}, {"layer_norm", {"Y.sqsum", "Y.sum"}}, {"layer_norm_2d", {"Y.sqsum", "Y.sum"}}};
  for (const auto& [kernel, stages] : reductions) {
    std::vector<Sketch> sk = sketches(kernel, SketchRules::gpu());
    EXPECT_EQ(sk.size(), 3u) << kernel;
    int fused = 0;
    for (const Sketch& s : sk) {
      if (kernel == "softmax") {
        EXPECT_EQ(s.state.stage(s.state.find_stage("Y.exp")).location, ComputeLocation::Inlined);
      }
      for (const std::string& stage : {stages.first, stages.second}) EXPECT_GE(s.state.find_stage(stage + ".rf"), 0) << kernel << " " << stage;
      const int y = s.state.find_stage("Y");
      const Stage& first = s.state.stage(s.state.find_stage(stages.first));
      const Stage& second = s.state.stage(s.state.find_stage(stages.second));
      if (second.location != ComputeLocation::At) continue;
      // The second is fused only where the first is: it follows the first's split.
      ASSERT_EQ(first.location, ComputeLocation::At) << kernel;
      ++fused;
      for (const Stage* st : {&first, &second}) {
        EXPECT_EQ(st->attach_stage, y);
        EXPECT_EQ(st->attach_iter, s.state.stage(y).leaves[0]);
        EXPECT_EQ(st->leaf(static_cast<int>(st->leaves.size()) - 1).annotation, IterAnnotation::ThreadX);
      }
      // A row over several axes is walked as one loop.
      const std::string along = kernel == "layer_norm_2d" ? "i1@i2" : "i1";
      EXPECT_EQ(loops(s.state, "Y"), (std::vector<std::string>{"i0", along + ".0", along + ".1"}));
      EXPECT_EQ(s.state.stage(y).leaf(0).annotation, IterAnnotation::BlockX);
      EXPECT_EQ(s.state.stage(y).leaf(2).annotation, IterAnnotation::ThreadX);
      int first_split = -1, follows = 0;
      for (size_t k = 0; k < s.state.steps().size(); ++k) {
        if (first_split < 0 && dynamic_cast<const SplitStep*>(s.state.steps()[k].get())) first_split = static_cast<int>(k);
        if (auto* f = dynamic_cast<const FollowSplitStep*>(s.state.steps()[k].get())) follows += f->src_step == first_split;
      }
      EXPECT_EQ(follows, 2) << kernel;  // the consumer's threads and the second reduction's
    }
    EXPECT_EQ(fused, 1) << kernel;
  }
}

// A user's rule: reductions of `norm` are split by 8 before anything else happens to them.
class SplitReductionsByEight final : public SketchRule {
 public:
  std::string name() const override { return "split-by-eight"; }
  Condition check(const SamplerContext&, const State& s, int stage) const override {
    const Stage& st = s.stage(stage);
    return st.op->reduction() && st.relations.empty() ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  std::vector<std::pair<State, int>> apply(const SamplerContext&, const State& s, int stage) const override {
    State next = s;
    next.apply(std::make_shared<SplitStep>(stage, static_cast<int>(s.stage(stage).leaves.size()) - 1, std::vector<int64_t>{8}));
    return {{next, stage - 1}};
  }
};

TEST_F(SketchTest, UserRulesTakePart) {
  SketchRules rules = SketchRules::cpu();
  rules.add(std::make_shared<SplitReductionsByEight>(), 0);
  std::vector<Sketch> sk = sketches("norm", rules);
  ASSERT_EQ(sk.size(), 1u);
  EXPECT_TRUE(derived_by(sk[0], "split-by-eight"));
  EXPECT_EQ(loops(sk[0].state, "S"), (std::vector<std::string>{"x", "i", "j.0", "j.1"}));
}

// Normalised over the last two axes: the reductions are computed per row of the outermost
// axis, not per inner row, which would compute them again for every inner row.
TEST_F(SketchTest, ReductionsOverSeveralAxesAreFusedAtTheRowOfAllOfThem) {
  int fused = 0;
  for (const Sketch& s : sketches("layer_norm_2d")) {
    int y = s.state.find_stage("Y");
    for (const char* reduction : {"Y.sum", "Y.sqsum"}) {
      const Stage& st = s.state.stage(s.state.find_stage(reduction));
      if (st.attach_stage != y) continue;
      ++fused;
      EXPECT_EQ(s.state.stage(y).iters[st.attach_iter].name, "i0") << reduction;
    }
  }
  EXPECT_GT(fused, 0);
}

}  // namespace
}  // namespace ansor
