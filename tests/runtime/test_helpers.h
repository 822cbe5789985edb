// Helpers shared by the runtime tests: scoped thread-count settings and a recorder of the
// chunks a parallel loop was split into.
#ifndef ANSOR_TESTS_RUNTIME_TEST_HELPERS_H
#define ANSOR_TESTS_RUNTIME_TEST_HELPERS_H

#include "ansor/runtime.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>

namespace ansor_test {

// Sets the runtime's thread count for one test and restores the default afterwards, so tests
// running in one process do not depend on each other's order.
class ScopedNumThreads {
public:
  explicit ScopedNumThreads(int num_threads) { ansor_set_num_threads(num_threads); }
  ~ScopedNumThreads() { ansor_set_num_threads(0); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;
};

struct Chunk {
  int64_t begin;
  int64_t end;
  std::thread::id thread;
};

// Collects the chunks of a loop from whichever threads run them.
class ChunkRecorder {
public:
  void record(int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex_);
    chunks_.push_back(Chunk{begin, end, std::this_thread::get_id()});
  }

  // The chunks ordered by their start.
  std::vector<Chunk> sorted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Chunk> chunks = chunks_;
    std::sort(chunks.begin(), chunks.end(),
              [](const Chunk& a, const Chunk& b) { return a.begin < b.begin; });
    return chunks;
  }

  static void task(int64_t begin, int64_t end, void* recorder) {
    static_cast<ChunkRecorder*>(recorder)->record(begin, end);
  }

private:
  mutable std::mutex mutex_;
  std::vector<Chunk> chunks_;
};

// The CPUs this process may run on, computed independently of the runtime.
inline int affinity_cpu_count() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return CPU_COUNT(&cpus);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

} // namespace ansor_test

#endif // ANSOR_TESTS_RUNTIME_TEST_HELPERS_H
