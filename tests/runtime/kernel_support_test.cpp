// Tests of the parallel loop and scoped workspace wrappers in kernel_support.h.
#include "allocation_counter.h"
#include "ansor/kernel_support.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using ansor_test::ScopedNumThreads;

// The horizontal reduction helpers combine all N values, whatever N (power of two or not).
TEST(KernelReductions, TreeHelpersCombineEveryValue) {
  const float values[7] = {3.0f, -1.0f, 4.0f, 1.5f, -5.0f, 9.0f, 2.0f};
  EXPECT_EQ((ansor_rt::vreduce_add<float, 7>(values)), 13.5f);
  EXPECT_EQ((ansor_rt::vreduce_add<float, 4>(values)), 7.5f);
  EXPECT_EQ((ansor_rt::vreduce_mul<float, 4>(values)), -18.0f);
  EXPECT_EQ((ansor_rt::vreduce_max<float, 7>(values)), 9.0f);
  EXPECT_EQ((ansor_rt::vreduce_min<float, 7>(values)), -5.0f);
  EXPECT_EQ((ansor_rt::vreduce_max<float, 1>(values)), 3.0f);
  const double sixteen[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ((ansor_rt::vreduce_add<double, 16>(sixteen)), 136.0);
}

// Several vectors of partial results (40 = 5 x 8 lanes, 128 = 8 x 16) are folded lane by lane
// before the tree; every value still counts once, and min/max choose as std::min/std::max do.
TEST(KernelReductions, SeveralVectorsOfPartialResultsCombineEveryValue) {
  float forty[40], many[128];
  for (int i = 0; i < 40; ++i) forty[i] = static_cast<float>((i * 7) % 40) - 20.0f;
  for (int i = 0; i < 128; ++i) many[i] = static_cast<float>(i % 13) * 0.5f;
  EXPECT_EQ((ansor_rt::vreduce_add<float, 40>(forty)), -20.0f);  // -20 .. 19
  EXPECT_EQ((ansor_rt::vreduce_max<float, 40>(forty)), 19.0f);
  EXPECT_EQ((ansor_rt::vreduce_min<float, 40>(forty)), -20.0f);
  float expected = 0.0f;
  for (float x : many) expected += x;
  EXPECT_EQ((ansor_rt::vreduce_add<float, 128>(many)), expected);  // halves and integers: exact in any order
  EXPECT_EQ((ansor_rt::vreduce_max<float, 128>(many)), 6.0f);
  float twos[24];
  for (float& x : twos) x = 2.0f;
  twos[17] = 0.5f;
  EXPECT_EQ((ansor_rt::vreduce_mul<float, 24>(twos)), std::ldexp(1.0f, 22));
}

TEST(KernelParallelFor, RunsALambdaOverTheWholeRange) {
  ScopedNumThreads threads(3);
  std::vector<int> values(1000, 0);
  const int status = ansor_rt::parallel_for(1000, [&values](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      values[static_cast<size_t>(i)] += static_cast<int>(i);
  });
  EXPECT_EQ(status, 0);
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(values[i], static_cast<int>(i));
}

struct SumFunctor {
  std::atomic<int64_t>* sum;
  void operator()(int64_t begin, int64_t end) const {
    int64_t local = 0;
    for (int64_t i = begin; i < end; ++i)
      local += i;
    sum->fetch_add(local);
  }
};

TEST(KernelParallelFor, AcceptsConstAndTemporaryCallables) {
  ScopedNumThreads threads(2);
  std::atomic<int64_t> sum{0};
  const SumFunctor functor{&sum};
  ansor_rt::parallel_for(100, functor);
  EXPECT_EQ(sum.load(), 4950);
  ansor_rt::parallel_for(100, SumFunctor{&sum});
  EXPECT_EQ(sum.load(), 9900);

  int64_t calls = 0;
  auto mutable_body = [&calls, count = int64_t{0}](int64_t begin, int64_t end) mutable {
    count += end - begin;
    calls = count;
  };
  ansor_rt::parallel_for(1, mutable_body); // One chunk: runs on this thread.
  EXPECT_EQ(calls, 1);
}

TEST(KernelParallelFor, NestsInline) {
  ScopedNumThreads threads(4);
  std::atomic<int64_t> inner_iterations{0};
  ansor_rt::parallel_for(8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::thread::id outer_thread = std::this_thread::get_id();
      ansor_rt::parallel_for(16, [&](int64_t inner_begin, int64_t inner_end) {
        EXPECT_EQ(std::this_thread::get_id(), outer_thread);
        inner_iterations.fetch_add(inner_end - inner_begin);
      });
    }
  });
  EXPECT_EQ(inner_iterations.load(), 8 * 16);
}

TEST(KernelParallelFor, MakesNoHeapAllocation) {
  if (!ansor_test::heap_allocations_counted())
    GTEST_SKIP() << "allocations cannot be counted in this build";
  ScopedNumThreads threads(2);
  std::vector<float> data(4096, 1.0f);
  auto scale = [&data](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      data[static_cast<size_t>(i)] *= 2.0f;
  };
  ansor_rt::parallel_for(4096, scale); // Starts the pool, which does allocate.
  const uint64_t before = ansor_test::heap_allocations();
  for (int round = 0; round < 100; ++round)
    ansor_rt::parallel_for(4096, scale);
  EXPECT_EQ(ansor_test::heap_allocations(), before);
  EXPECT_EQ(data[0], std::ldexp(1.0f, 101));
}

TEST(KernelWorkspace, HandsOutAlignedBlocksAndFreesThemAtScopeEnd) {
  void* first_block = nullptr;
  {
    ansor_rt::Workspace workspace;
    float* values = workspace.alloc<float>(256);
    ASSERT_NE(values, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(values) % 64, 0u);
    for (int i = 0; i < 256; ++i)
      values[i] = static_cast<float>(i);
    double* more = workspace.alloc<double>(3);
    ASSERT_NE(more, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(more) % 64, 0u);
    first_block = values;
  }
  // The block went back to this thread's cache, so the same request gets it again.
  void* again = ansor_workspace_alloc(256 * sizeof(float));
  EXPECT_EQ(again, first_block);
  ansor_workspace_free(again);
}

TEST(KernelWorkspace, RefusesBlocksBeyondItsCapacity) {
  ansor_rt::Workspace workspace;
  for (int i = 0; i < ansor_rt::Workspace::kCapacity; ++i)
    ASSERT_NE(workspace.alloc<int>(10), nullptr) << i;
  EXPECT_EQ(workspace.alloc<int>(10), nullptr);
}

TEST(KernelWorkspace, RefusesOverflowingAndImpossibleSizes) {
  ansor_rt::Workspace workspace;
  EXPECT_EQ(workspace.alloc<double>(SIZE_MAX / 4), nullptr);
  EXPECT_EQ(workspace.alloc<char>(size_t{1} << 62), nullptr);
  EXPECT_NE(workspace.alloc<char>(1), nullptr) << "failures do not use up capacity";
}

// Under LeakSanitizer a missing free in the destructor shows up as a leak report at exit.
TEST(KernelWorkspace, RepeatedUseDoesNotLeak) {
  for (int round = 0; round < 2000; ++round) {
    ansor_rt::Workspace workspace;
    for (int i = 0; i < ansor_rt::Workspace::kCapacity; ++i) {
      char* block = workspace.alloc<char>(static_cast<size_t>(64 * (1 + (round + i) % 7)));
      ASSERT_NE(block, nullptr);
      block[0] = 1;
    }
  }
  ansor_rt::parallel_for(64, [](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      ansor_rt::Workspace workspace;
      std::memset(workspace.alloc<char>(1000), 0, 1000);
    }
  });
}

} // namespace
