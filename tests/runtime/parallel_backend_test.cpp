// Tests of ansor_set_parallel_backend: loops go to the user's executor while one is set, nested
// loops still run inline, and NULL restores the built-in pool.
#include "ansor/runtime.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using ansor_test::Chunk;
using ansor_test::ChunkRecorder;
using ansor_test::ScopedNumThreads;

// A user executor: runs [0, n) in chunks of `chunk_size` on threads of its own.
struct TestExecutor {
  int64_t chunk_size = 3;
  std::atomic<int> calls{0};

  static void run(int64_t n, ansor_task_fn body, void* context, void* user) {
    TestExecutor* executor = static_cast<TestExecutor*>(user);
    executor->calls.fetch_add(1);
    std::vector<std::thread> threads;
    for (int64_t begin = 0; begin < n; begin += executor->chunk_size) {
      const int64_t end = std::min(n, begin + executor->chunk_size);
      threads.emplace_back([=] { body(begin, end, context); });
    }
    for (std::thread& thread : threads)
      thread.join();
  }
};

// Restores the built-in pool even when an assertion fails halfway.
struct ScopedBackend {
  ScopedBackend(ansor_parallel_backend backend, void* user) {
    ansor_set_parallel_backend(backend, user);
  }
  ~ScopedBackend() { ansor_set_parallel_backend(nullptr, nullptr); }
};

TEST(ParallelBackend, LoopsRunOnTheUsersExecutor) {
  TestExecutor executor;
  ScopedBackend backend(TestExecutor::run, &executor);
  ChunkRecorder recorder;
  ansor_parallel_for(10, ChunkRecorder::task, &recorder);
  EXPECT_EQ(executor.calls.load(), 1);

  const std::vector<Chunk> chunks = recorder.sorted();
  ASSERT_EQ(chunks.size(), 4u); // 3 + 3 + 3 + 1, as the executor splits it.
  int64_t next = 0;
  for (const Chunk& chunk : chunks) {
    EXPECT_EQ(chunk.begin, next);
    next = chunk.end;
  }
  EXPECT_EQ(next, 10);

  ansor_parallel_for(0, ChunkRecorder::task, &recorder);
  EXPECT_EQ(executor.calls.load(), 1) << "empty loops never reach the executor";
}

TEST(ParallelBackend, NestedLoopsRunInline) {
  TestExecutor executor;
  ScopedBackend backend(TestExecutor::run, &executor);
  std::atomic<int> inline_inner_loops{0};
  ansor_parallel_for(
      6,
      [](int64_t begin, int64_t end, void* data) {
        for (int64_t i = begin; i < end; ++i) {
          ChunkRecorder inner;
          ansor_parallel_for(50, ChunkRecorder::task, &inner);
          const std::vector<Chunk> chunks = inner.sorted();
          if (chunks.size() == 1 && chunks[0].end == 50 &&
              chunks[0].thread == std::this_thread::get_id())
            static_cast<std::atomic<int>*>(data)->fetch_add(1);
        }
      },
      &inline_inner_loops);
  EXPECT_EQ(executor.calls.load(), 1);
  EXPECT_EQ(inline_inner_loops.load(), 6);
}

TEST(ParallelBackend, NullRestoresTheBuiltInPool) {
  ScopedNumThreads threads(3);
  TestExecutor executor;
  {
    ScopedBackend backend(TestExecutor::run, &executor);
    ChunkRecorder recorder;
    ansor_parallel_for(9, ChunkRecorder::task, &recorder);
    EXPECT_EQ(executor.calls.load(), 1);
  }
  ChunkRecorder recorder;
  ansor_parallel_for(9, ChunkRecorder::task, &recorder);
  EXPECT_EQ(executor.calls.load(), 1);
  EXPECT_EQ(recorder.sorted().size(), 3u) << "the pool splits by thread count";
}

} // namespace
