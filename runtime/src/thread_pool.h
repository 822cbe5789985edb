// The worker threads behind ansor_parallel_for. A pool runs one loop at a time; callers
// arbitrate who may use it (see parallel_for.cpp).
#ifndef ANSOR_RUNTIME_SRC_THREAD_POOL_H
#define ANSOR_RUNTIME_SRC_THREAD_POOL_H

#include "ansor/runtime.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ansor::runtime {

// The bounds of chunk `index` when [0, n) is split into `count` contiguous chunks whose sizes
// differ by at most one (the first n % count chunks get the extra iteration).
inline void chunk_bounds(int64_t n, int64_t count, int64_t index, int64_t* begin, int64_t* end) {
  const int64_t base = n / count;
  const int64_t extra = n % count;
  *begin = index * base + (index < extra ? index : extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}

// How a pool of num_threads threads waits: pauses, then yields, then sleeps (thread_pool.cpp).
int spin_pauses_for(int num_threads);
int spin_yields();

class ThreadPool {
public:
  // Starts num_threads - 1 workers; the thread calling run() is the last one. If the system
  // refuses to create some, the pool works with those it got.
  explicit ThreadPool(int num_threads);
  // Stops and joins the workers. No run() may be in progress.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The thread count the pool was built for, whether or not every worker could be started.
  int requested_threads() const { return requested_threads_; }

  // Runs body over [0, n) (n >= 1) in min(n, workers + 1) chunks; the calling thread runs chunk
  // 0 and returns when every chunk is done. Only one thread may be in run() at a time.
  void run(int64_t n, ansor_task_fn body, void* context);

  // Lets pools orphaned by fork() be chained into a list that stays reachable (see
  // parallel_for.cpp); the pool itself never reads it.
  ThreadPool* next_orphan = nullptr;

private:
  void worker_loop(int64_t chunk_index);
  void run_chunk(int64_t index, int64_t count);
  template <class Ready>
  void wait_until(Ready ready, std::atomic<int>& sleepers, std::condition_variable& wakeup);
  void wake(std::atomic<int>& sleepers, std::condition_variable& wakeup);

  const int requested_threads_;
  const int spin_pauses_; // How long waits spin before yielding (see thread_pool.cpp).

  // The loop being run. Written by the caller before it publishes a new ticket, read only by
  // the workers that take part in it, which the caller waits for before the next loop.
  ansor_task_fn body_ = nullptr;
  void* context_ = nullptr;
  int64_t n_ = 0;

  // (generation << kChunkBits) | chunk count of the latest loop. Packing both in one word lets a
  // worker that slept through several loops see a consistent pair for the newest one.
  std::atomic<uint64_t> ticket_{0};
  uint64_t generation_ = 0; // Caller side only.
  std::atomic<int64_t> pending_chunks_{0};
  std::atomic<bool> stopping_{false};

  // Sleeping is counted so that the hot path (everyone spinning) makes no system call.
  std::mutex sleep_mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<int> sleeping_callers_{0};

  std::vector<std::thread> workers_; // Last: workers start once everything above exists.
};

} // namespace ansor::runtime

#endif // ANSOR_RUNTIME_SRC_THREAD_POOL_H
