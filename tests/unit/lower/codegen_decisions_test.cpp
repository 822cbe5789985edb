// The decisions lowering takes for the target a program is printed for (codegen_decisions.h):
// a GPU program's launches with their grid, block, shared memory and tail guards, its vector
// copies and index type; the cache line of the target.
#include <gtest/gtest.h>

#include "codegen/cuda_codegen.h"
#include "codegen/kernel_signature.h"
#include "lower/gpu_launch.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

LoweredKernel lower_for(const State& state, const std::string& target) {
  LowerOptions options;
  options.target = parse_target(target);
  return lower_state(state, "k", options);
}

const ForNode* loop_named(const LoweredKernel& k, const std::string& prefix) {
  const ForNode* found = nullptr;
  for_each_stmt(k.body, [&](const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (f && !found && f->var->name.rfind(prefix, 0) == 0) found = f;
  });
  return found;
}

// A 16 x 12 x 8 matmul in blocks of 4 rows, A and B read through shared memory per slice of 4
// of the reduction: C's and A.shared's loops take 4 threads, B.shared's 8 (the block's width).
State shared_matmul(const std::shared_ptr<const ComputeDAG>& dag) {
  State s(dag);
  s.apply(std::make_shared<CacheReadStep>(0, MemoryScope::Shared, std::vector<int>{2}));  // A.shared: stage 1, C: 3
  s.apply(std::make_shared<CacheReadStep>(2, MemoryScope::Shared, std::vector<int>{3}));  // B.shared: stage 3, C: 4
  const int c = 4;
  s.apply(std::make_shared<SplitStep>(c, 2, std::vector<int64_t>{4}));           // i j k.0 k.1
  s.apply(std::make_shared<SplitStep>(c, 0, std::vector<int64_t>{4}));           // i.0 i.1 j k.0 k.1
  s.apply(std::make_shared<ReorderStep>(c, std::vector<int>{0, 3, 1, 2, 4}));  // i.0 k.0 i.1 j k.1
  s.apply(std::make_shared<AnnotateStep>(c, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<AnnotateStep>(c, 2, IterAnnotation::ThreadX));
  for (auto [shared, threads] : {std::pair{1, int64_t{4}}, std::pair{3, int64_t{8}}}) {
    s.apply(std::make_shared<ComputeAtStep>(shared, c, 1));
    s.apply(std::make_shared<FuseStep>(shared, std::vector<int>{0, 1}));
    s.apply(std::make_shared<SplitStep>(shared, 0, std::vector<int64_t>{threads}));
    s.apply(std::make_shared<AnnotateStep>(shared, 1, IterAnnotation::ThreadX));
  }
  return s;
}

TEST(CodegenDecisionsTest, AGpuProgramIsOneLaunchWithItsGridBlockSharedMemoryAndTailGuards) {
  auto dag = test::dag_of(test::parse("kernel mm { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "mm");
  State s = shared_matmul(dag);
  LoweredKernel k = lower_for(s, "cuda:sm_80");
  ASSERT_EQ(k.launches.size(), 1u) << to_string(k.body);
  const GpuLaunch& launch = k.launches[0];
  EXPECT_EQ(launch.grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(launch.block, (ThreadDims{8, 1, 1}));
  ASSERT_EQ(launch.block_loops.size(), 1u);
  EXPECT_EQ(launch.block_loops[0]->extent, 4);
  // A.shared holds 4 x 4 floats, B.shared 4 x 12, each at a 16-byte boundary.
  ASSERT_EQ(launch.shared.size(), 2u);
  EXPECT_EQ(launch.shared_bytes, 4 * 4 * 4 + 4 * 12 * 4);
  EXPECT_EQ(launch.shared[1].offset % kSharedAlignment, 0);
  EXPECT_FALSE(launch.shared_opt_in);
  // The loops of 4 threads (C's initialisation and update, A.shared's copy) run in a block of 8:
  // guarded; B.shared's spans the block: not.
  int guarded = 0, unguarded = 0;
  for_each_stmt(launch.body, [&](const Stmt& x) {
    auto* f = x->as<ForNode>();
    if (!f || f->for_kind != ForKind::ThreadBinding) return;
    EXPECT_EQ(launch.guards(f), f->extent < 8) << f->var->name;
    (launch.guards(f) ? guarded : unguarded) += 1;
  });
  EXPECT_EQ(guarded, 3) << to_string(launch.body);
  EXPECT_EQ(unguarded, 1);
  EXPECT_EQ(launch.tail_guards.size(), 3u);
  EXPECT_EQ(k.index_dtype, DType::I32);
  EXPECT_NO_THROW(check_gpu_limits(k, parse_target("cuda:sm_80").gpu));

  // The decisions change how the program is printed, not what it computes.
  LoweredKernel naive = lower_state(State(dag), "naive");
  std::vector<std::vector<double>> expected = test::random_args(naive, 3), args = expected;
  interpret(naive, expected);
  interpret(k, args);
  EXPECT_EQ(args, expected);
}

TEST(CodegenDecisionsTest, ACpuTargetMakesNoLaunchesAndSixtyFourBitIndices) {
  auto dag = test::dag_of(test::parse("kernel mm { A = input f32[16, 8]\n B = input f32[8, 12]\n C = matmul(A, B) }"), "mm");
  LoweredKernel k = lower_for(State(dag), "cpu:x86_64:znver4:avx512:t1");
  EXPECT_TRUE(k.launches.empty());
  EXPECT_TRUE(k.vector_copies.empty());
  EXPECT_EQ(k.index_dtype, DType::I64);
  EXPECT_THROW(check_gpu_limits(k, parse_target("cuda:sm_80").gpu), std::invalid_argument);
  // Without threads bound, a GPU program is one block of one thread.
  LoweredKernel gpu = lower_for(State(dag), "cuda:sm_90");
  ASSERT_EQ(gpu.launches.size(), 1u);
  EXPECT_EQ(gpu.launches[0].threads(), 1);
  EXPECT_EQ(gpu.launches[0].grid, (std::array<int64_t, 3>{1, 1, 1}));
}

TEST(CodegenDecisionsTest, GpuIndicesAreThirtyTwoBitWhereEveryBufferFits) {
  const char* big = "kernel k { X = input f32[65536, 65536]\n Y[i:65536, j:65536] = X[i, j] * 2.0 }";
  EXPECT_EQ(lower_for(State(test::dag_of(test::parse(big), "k")), "cuda:sm_80").index_dtype, DType::I64);
  const char* small = "kernel k { X = input f32[256, 256]\n Y[i:256, j:256] = X[i, j] * 2.0 }";
  EXPECT_EQ(lower_for(State(test::dag_of(test::parse(small), "k")), "cuda:sm_80").index_dtype, DType::I32);
}

// A copy of 4 consecutive floats per thread from a first element at a multiple of 4 is one vector
// copy; it moves kernel arguments, so its launch has variants for aligned and unaligned ones.
// Over 3 lanes it is no vector copy.
// Y = X, each row a block, its columns spread over threads in vectors of `lanes` (loops i j.0 j.1).
State vectorized_copy(const std::shared_ptr<const ComputeDAG>& dag, int64_t lanes) {
  State s(dag);
  const int y = s.num_stages() - 1;
  s.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{lanes}));
  s.apply(std::make_shared<AnnotateStep>(y, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<AnnotateStep>(y, 1, IterAnnotation::ThreadX));
  s.apply(std::make_shared<AnnotateStep>(y, 2, IterAnnotation::Vectorize));
  return s;
}

TEST(CodegenDecisionsTest, AlignedCopiesOfFourFloatsAreVectorCopies) {
  for (int64_t lanes : {4, 3}) {
    auto dag = test::dag_of(test::parse("kernel k { X = input f32[64, 24]\n Y[i:64, j:24] = X[i, j] }"), "k");
    const State s = vectorized_copy(dag, lanes);
    LoweredKernel k = lower_for(s, "cuda:sm_80");
    ASSERT_EQ(k.launches.size(), 1u);
    const ForNode* lane_loop = loop_named(k, "j.1");
    ASSERT_NE(lane_loop, nullptr) << to_string(k.body);
    const VectorCopy* copy = k.find_vector_copy(lane_loop);
    if (lanes == 4) {
      ASSERT_NE(copy, nullptr) << to_string(k.body);
      EXPECT_EQ(copy->lanes, 4);
      EXPECT_TRUE(copy->of_arguments);
      EXPECT_TRUE(k.launches[0].aligned_variants);
    } else {
      EXPECT_EQ(copy, nullptr);
      EXPECT_FALSE(k.launches[0].aligned_variants);
    }
    // On a CPU the same loop is vector statements, not a copy.
    EXPECT_TRUE(lower_for(s, "cpu:x86_64:znver4:avx512:t1").vector_copies.empty());
  }
}

// Copies of 16-bit elements move 4, 8 or 16 bytes at once: 2, 4 or 8 halves; 16 halves are no
// vector copy. The CUDA generator prints the copy, and a scalar copy of halves moves their bits.
TEST(CodegenDecisionsTest, AlignedCopiesOfHalvesAreVectorCopiesOfUpToSixteenBytes) {
  for (int64_t lanes : {2, 4, 8, 16}) {
    auto dag = test::dag_of(test::parse("kernel k { X = input f16[64, 32]\n Y[i:64, j:32] = X[i, j] }"), "k");
    LoweredKernel k = lower_for(vectorized_copy(dag, lanes), "cuda:sm_80");
    const ForNode* lane_loop = loop_named(k, "j.1");
    ASSERT_NE(lane_loop, nullptr) << to_string(k.body);
    const VectorCopy* copy = k.find_vector_copy(lane_loop);
    const std::string text = emit_cuda_kernel(k, kernel_params(*dag), "k");
    if (lanes <= 8) {
      ASSERT_NE(copy, nullptr) << lanes << "\n" << to_string(k.body);
      EXPECT_EQ(copy->lanes, lanes);
      EXPECT_NE(text.find(fmt::format("ansor_rt::copy_vector<{}, ansor_aligned>", lanes)), std::string::npos) << text;
    } else {
      EXPECT_EQ(copy, nullptr);
      EXPECT_EQ(text.find("f16_to_f32"), std::string::npos) << "the halves' bits are copied\n" << text;
    }
  }
}

TEST(CodegenDecisionsTest, TheCacheLineComesFromTheTarget) {
  auto dag = test::dag_of(test::parse("kernel k { X = input f32[64]\n Y[i:64] = X[i] * 2.0 }"), "k");
  Target target = parse_target("cpu:aarch64:apple-m1:neon:t1");
  EXPECT_EQ(target.cache_line_bytes, 64);
  target.cache_line_bytes = 128;
  LowerOptions options;
  options.target = target;
  EXPECT_EQ(lower_state(State(dag), "k", options).cache_line_bytes, 128);
  EXPECT_EQ(lower_state(State(dag), "k").cache_line_bytes, 64);
}

}  // namespace
}  // namespace ansor
