// Tests of ansor_parallel_for on the built-in pool: coverage, chunking, nesting, concurrent
// callers and the thread-count setting.
#include "ansor/runtime.h"
#include "test_helpers.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

namespace {

using ansor_test::Chunk;
using ansor_test::ChunkRecorder;
using ansor_test::ScopedNumThreads;

// Adds one to every element of its range; run over a vector of zeros, it must leave all ones.
void increment(int64_t begin, int64_t end, void* data) {
  uint8_t* counts = static_cast<uint8_t*>(data);
  for (int64_t i = begin; i < end; ++i)
    ++counts[i];
}

// Checks that the chunks tile [0, n) in order, that there are min(n, threads) of them and that
// their sizes differ by at most one.
void expect_balanced_tiling(const std::vector<Chunk>& chunks, int64_t n, int threads) {
  ASSERT_EQ(static_cast<int64_t>(chunks.size()), std::min<int64_t>(n, threads));
  int64_t next = 0;
  int64_t smallest = INT64_MAX;
  int64_t largest = 0;
  for (const Chunk& chunk : chunks) {
    EXPECT_EQ(chunk.begin, next);
    EXPECT_LT(chunk.begin, chunk.end);
    smallest = std::min(smallest, chunk.end - chunk.begin);
    largest = std::max(largest, chunk.end - chunk.begin);
    next = chunk.end;
  }
  EXPECT_EQ(next, n);
  EXPECT_LE(largest - smallest, 1);
}

class ParallelForTest : public ::testing::TestWithParam<int> {};

TEST_P(ParallelForTest, CoversEveryIndexOnce) {
  ScopedNumThreads threads(GetParam());
  for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{8}, int64_t{9},
                    int64_t{1000}, int64_t{1} << 22}) {
    std::vector<uint8_t> counts(static_cast<size_t>(n), 0);
    EXPECT_EQ(ansor_parallel_for(n, increment, counts.data()), 0);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(counts[static_cast<size_t>(i)], 1) << "n=" << n << " i=" << i;
  }
}

TEST_P(ParallelForTest, ChunksAreContiguousAndBalanced) {
  const int num_threads = GetParam();
  ScopedNumThreads threads(num_threads);
  for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, int64_t{7}, int64_t{8},
                    int64_t{1000}, int64_t{1001}, int64_t{1} << 40}) {
    ChunkRecorder recorder;
    ansor_parallel_for(n, ChunkRecorder::task, &recorder);
    SCOPED_TRACE("n=" + std::to_string(n));
    expect_balanced_tiling(recorder.sorted(), n, num_threads);
  }
}

TEST_P(ParallelForTest, EmptyRangeRunsNothing) {
  ScopedNumThreads threads(GetParam());
  for (int64_t n : {int64_t{0}, int64_t{-1}, INT64_MIN}) {
    ChunkRecorder recorder;
    EXPECT_EQ(ansor_parallel_for(n, ChunkRecorder::task, &recorder), 0);
    EXPECT_TRUE(recorder.sorted().empty());
  }
}

TEST_P(ParallelForTest, RepeatedLoopsStayCorrect) {
  ScopedNumThreads threads(GetParam());
  std::vector<uint8_t> counts(257, 0);
  for (int round = 0; round < 200; ++round)
    ansor_parallel_for(static_cast<int64_t>(counts.size()), increment, counts.data());
  for (uint8_t count : counts)
    ASSERT_EQ(count, 200);
}

// 8 threads oversubscribe the 2-core machines the tests run on; that must still work.
INSTANTIATE_TEST_SUITE_P(ThreadCounts, ParallelForTest, ::testing::Values(1, 2, 3, 8));

TEST(ParallelForNesting, InnerLoopRunsInlineOnItsThread) {
  ScopedNumThreads threads(4);
  struct Outer {
    std::atomic<int> inner_calls{0};
    std::atomic<int> inner_misplaced{0};
  } outer;
  ansor_parallel_for(
      4,
      [](int64_t begin, int64_t end, void* data) {
        Outer* outer = static_cast<Outer*>(data);
        for (int64_t i = begin; i < end; ++i) {
          ChunkRecorder inner;
          ansor_parallel_for(100, ChunkRecorder::task, &inner);
          const std::vector<Chunk> chunks = inner.sorted();
          const bool whole_range_here = chunks.size() == 1 && chunks[0].begin == 0 &&
                                        chunks[0].end == 100 &&
                                        chunks[0].thread == std::this_thread::get_id();
          outer->inner_calls.fetch_add(1);
          if (!whole_range_here)
            outer->inner_misplaced.fetch_add(1);
        }
      },
      &outer);
  EXPECT_EQ(outer.inner_calls.load(), 4);
  EXPECT_EQ(outer.inner_misplaced.load(), 0);
}

TEST(ParallelForConcurrency, CallersOnSeveralThreadsGetCorrectResults) {
  ScopedNumThreads threads(3);
  constexpr int kCallers = 4;
  constexpr int kRounds = 100;
  std::vector<std::vector<uint8_t>> counts(kCallers, std::vector<uint8_t>(1000, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&counts, c] {
      for (int round = 0; round < kRounds; ++round)
        ansor_parallel_for(1000, increment, counts[static_cast<size_t>(c)].data());
    });
  }
  for (std::thread& caller : callers)
    caller.join();
  for (const std::vector<uint8_t>& caller_counts : counts) {
    for (uint8_t count : caller_counts)
      ASSERT_EQ(count, kRounds);
  }
}

// While one caller's loop holds the pool, a second caller must not wait for it.
TEST(ParallelForConcurrency, SecondCallerRunsInlineWhilePoolIsBusy) {
  ScopedNumThreads threads(2);
  struct Handshake {
    std::atomic<bool> first_loop_running{false};
    std::atomic<bool> second_loop_done{false};
  } handshake;

  std::thread first([&handshake] {
    ansor_parallel_for(
        2,
        [](int64_t, int64_t, void* data) {
          Handshake* handshake = static_cast<Handshake*>(data);
          handshake->first_loop_running.store(true);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (!handshake->second_loop_done.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        },
        &handshake);
  });
  while (!handshake.first_loop_running.load())
    std::this_thread::yield();

  ChunkRecorder recorder;
  ansor_parallel_for(10, ChunkRecorder::task, &recorder);
  handshake.second_loop_done.store(true);
  first.join();

  const std::vector<Chunk> chunks = recorder.sorted();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, 0);
  EXPECT_EQ(chunks[0].end, 10);
  EXPECT_EQ(chunks[0].thread, std::this_thread::get_id());
}

TEST(NumThreads, SetGetAndRestoreDefault) {
  const int default_threads = ansor_get_num_threads();
  EXPECT_GE(default_threads, 1);
  ansor_set_num_threads(5);
  EXPECT_EQ(ansor_get_num_threads(), 5);
  ansor_set_num_threads(0);
  EXPECT_EQ(ansor_get_num_threads(), default_threads);
  ansor_set_num_threads(7);
  ansor_set_num_threads(-3);
  EXPECT_EQ(ansor_get_num_threads(), default_threads);
}

TEST(NumThreads, ResizingChangesTheChunkCount) {
  for (int num_threads : {2, 5, 3, 1, 4}) {
    ScopedNumThreads threads(num_threads);
    ChunkRecorder recorder;
    ansor_parallel_for(100, ChunkRecorder::task, &recorder);
    const std::vector<Chunk> chunks = recorder.sorted();
    EXPECT_EQ(static_cast<int>(chunks.size()), num_threads);
    std::set<std::thread::id> thread_ids;
    for (const Chunk& chunk : chunks)
      thread_ids.insert(chunk.thread);
    EXPECT_EQ(static_cast<int>(thread_ids.size()), num_threads) << "one chunk per thread";
  }
}

// The spin the pool reports is the one it waits with: polls while it has a CPU per thread, none
// once it has more threads than CPUs (polling would only keep the threads with work off them).
TEST(SpinWait, PausesOnlyWithACpuPerThread) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  int pauses = -1;
  int yields = -1;
  {
    ScopedNumThreads threads(1);
    ansor_get_spin_wait(&pauses, &yields);
    EXPECT_GT(pauses, 0);
    EXPECT_GT(yields, 0);
  }
  const int one_thread_yields = yields;
  {
    ScopedNumThreads threads(cpus + 1);
    ansor_get_spin_wait(&pauses, &yields);
    EXPECT_EQ(pauses, 0);
    EXPECT_EQ(yields, one_thread_yields);
  }
}

} // namespace
