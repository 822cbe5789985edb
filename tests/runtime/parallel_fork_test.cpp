// Tests that a child forked from a program whose pool is running can still run parallel loops:
// the child must neither deadlock on the parent's workers (which do not exist in the child) nor
// get wrong results.
#include "ansor/runtime.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using ansor_test::Chunk;
using ansor_test::ChunkRecorder;
using ansor_test::ScopedNumThreads;

// Runs in the child: exit status 0 when loops there cover their ranges in four chunks.
[[noreturn]] void check_loops_in_child() {
  alarm(30); // A deadlock ends the child with SIGALRM instead of hanging the test.
  bool ok = ansor_get_num_threads() == 4;
  for (int round = 0; round < 20 && ok; ++round) {
    ChunkRecorder recorder;
    ansor_parallel_for(1000, ChunkRecorder::task, &recorder);
    const std::vector<Chunk> chunks = recorder.sorted();
    int64_t next = 0;
    for (const Chunk& chunk : chunks) {
      ok = ok && chunk.begin == next;
      next = chunk.end;
    }
    ok = ok && next == 1000 && chunks.size() == 4;
  }
  _exit(ok ? 0 : 1);
}

void expect_child_succeeds(pid_t child) {
  ASSERT_GT(child, 0) << "fork failed";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ParallelForFork, ChildOfIdlePoolRunsLoops) {
  ScopedNumThreads threads(4);
  ChunkRecorder warm_up;
  ansor_parallel_for(100, ChunkRecorder::task, &warm_up); // Starts the parent's workers.
  const pid_t child = fork();
  if (child == 0)
    check_loops_in_child();
  expect_child_succeeds(child);

  // The parent's pool is unaffected.
  ChunkRecorder recorder;
  ansor_parallel_for(100, ChunkRecorder::task, &recorder);
  EXPECT_EQ(recorder.sorted().size(), 4u);
}

// The fork happens while every chunk of another thread's loop is running, so the child inherits
// a pool whose workers are all busy. Waiting for all of them (not just the first) also keeps the
// fork out of a worker's start-up: the sanitizer runtimes of clang < 18 do not lock their thread
// registry and allocator around fork(), so a child forked while a thread is being set up can
// deadlock in its first pthread_create under ASan, a limitation of the tool rather than of the
// runtime tested here.
TEST(ParallelForFork, ChildForkedWhileAnotherThreadRunsALoop) {
  ScopedNumThreads threads(4);
  constexpr int kChunks = 4;
  std::atomic<int> chunks_running{0};
  std::atomic<bool> forked{false};
  struct Flags {
    std::atomic<int>* chunks_running;
    std::atomic<bool>* forked;
  } flags{&chunks_running, &forked};

  std::thread busy([&flags] {
    ansor_parallel_for(
        kChunks,
        [](int64_t begin, int64_t end, void* data) {
          Flags* flags = static_cast<Flags*>(data);
          flags->chunks_running->fetch_add(static_cast<int>(end - begin));
          while (!flags->forked->load())
            std::this_thread::yield();
        },
        &flags);
  });
  while (chunks_running.load() < kChunks)
    std::this_thread::yield();

  const pid_t child = fork();
  if (child == 0)
    check_loops_in_child();
  forked.store(true);
  busy.join();
  expect_child_succeeds(child);
}

} // namespace
