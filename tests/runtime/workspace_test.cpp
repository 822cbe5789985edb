// Tests of ansor_workspace_alloc / ansor_workspace_free: alignment, usable size, reuse, frees
// on other threads, and failure as NULL.
#include "ansor/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

bool is_aligned_64(const void* block) { return reinterpret_cast<uintptr_t>(block) % 64 == 0; }

TEST(Workspace, BlocksAreAlignedAndWritable) {
  for (size_t bytes : {size_t{1}, size_t{3}, size_t{63}, size_t{64}, size_t{65}, size_t{1000},
                       size_t{4096}, size_t{1} << 20, size_t{100} << 20}) {
    void* block = ansor_workspace_alloc(bytes);
    ASSERT_NE(block, nullptr) << bytes;
    EXPECT_TRUE(is_aligned_64(block)) << bytes;
    std::memset(block, 0xab, bytes);
    EXPECT_EQ(static_cast<unsigned char*>(block)[bytes - 1], 0xab);
    ansor_workspace_free(block);
  }
}

TEST(Workspace, ZeroBytesGivesDistinctFreeableBlocks) {
  void* first = ansor_workspace_alloc(0);
  void* second = ansor_workspace_alloc(0);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_TRUE(is_aligned_64(first));
  ansor_workspace_free(first);
  ansor_workspace_free(second);
}

TEST(Workspace, LiveBlocksDoNotOverlap) {
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < 32; ++i) {
    blocks.push_back(static_cast<unsigned char*>(ansor_workspace_alloc(256)));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), i, 256);
  }
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 256; ++j)
      ASSERT_EQ(blocks[static_cast<size_t>(i)][j], i);
  }
  for (unsigned char* block : blocks)
    ansor_workspace_free(block);
}

// The runtime promises per-thread reuse of recently freed blocks: the same size, freed and
// requested again on one thread, comes back without a new allocation.
TEST(Workspace, FreedBlockIsReusedOnTheSameThread) {
  void* first = ansor_workspace_alloc(12345);
  ASSERT_NE(first, nullptr);
  ansor_workspace_free(first);
  void* second = ansor_workspace_alloc(12345);
  EXPECT_EQ(second, first);
  ansor_workspace_free(second);
}

TEST(Workspace, BlocksMayBeFreedOnAnotherThread) {
  std::vector<void*> blocks;
  std::thread producer([&blocks] {
    for (size_t bytes = 64; bytes <= 64 * 1024; bytes *= 2)
      blocks.push_back(ansor_workspace_alloc(bytes));
  });
  producer.join();
  for (void* block : blocks)
    ASSERT_NE(block, nullptr);

  std::thread consumer([&blocks] {
    for (void* block : blocks)
      ansor_workspace_free(block);
    // Whatever the consumer cached must serve its own requests correctly.
    for (size_t bytes = 64; bytes <= 64 * 1024; bytes *= 2) {
      void* block = ansor_workspace_alloc(bytes);
      ASSERT_NE(block, nullptr);
      std::memset(block, 1, bytes);
      ansor_workspace_free(block);
    }
  });
  consumer.join();
}

TEST(Workspace, ManyThreadsAllocateAndFreeConcurrently) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t bytes = static_cast<size_t>(64 + (i * 37 + t * 101) % 5000);
        unsigned char* block = static_cast<unsigned char*>(ansor_workspace_alloc(bytes));
        ASSERT_NE(block, nullptr);
        block[0] = static_cast<unsigned char>(t);
        block[bytes - 1] = static_cast<unsigned char>(t);
        ASSERT_EQ(block[0], t);
        ansor_workspace_free(block);
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
}

TEST(Workspace, FreeingNullDoesNothing) { ansor_workspace_free(nullptr); }

TEST(Workspace, ImpossibleRequestsReturnNull) {
  EXPECT_EQ(ansor_workspace_alloc(SIZE_MAX), nullptr);
  EXPECT_EQ(ansor_workspace_alloc(SIZE_MAX - 10), nullptr);
  EXPECT_EQ(ansor_workspace_alloc(size_t{1} << 62), nullptr);
  // The runtime still works afterwards.
  void* block = ansor_workspace_alloc(100);
  EXPECT_NE(block, nullptr);
  ansor_workspace_free(block);
}

} // namespace
