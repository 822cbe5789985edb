// The worker threads behind ansor_parallel_for: dispatch of one loop's chunks to the workers,
// and waiting that is fast when loops come back to back yet idle when they do not.
#include "thread_pool.h"

#include "num_threads.h"
#include "parallel_region.h"

#include <algorithm>
#include <exception>

namespace ansor::runtime {
namespace {

constexpr int kChunkBits = 16;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
static_assert(kMaxThreads <= static_cast<int>(kChunkMask), "chunk counts must fit the ticket");

// How long a waiting thread polls before it sleeps: a few thousand pauses (tens to hundreds of
// microseconds) keep back-to-back loops at sub-microsecond latency, then yields let other
// threads run, and finally the thread blocks so that an idle program uses no CPU. With more
// threads than CPUs, pausing only keeps the threads that have work off the CPU, so such pools
// skip straight to yielding.
constexpr int kSpinPauses = 4000;
constexpr int kSpinYields = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#else
  std::this_thread::yield();
#endif
}

} // namespace

int spin_pauses_for(int num_threads) { return num_threads <= available_cpus() ? kSpinPauses : 0; }

int spin_yields() { return kSpinYields; }

ThreadPool::ThreadPool(int num_threads)
    : requested_threads_(num_threads), spin_pauses_(spin_pauses_for(num_threads)) {
  try {
    workers_.reserve(static_cast<size_t>(std::max(num_threads - 1, 0)));
    for (int64_t chunk = 1; chunk < num_threads; ++chunk)
      workers_.emplace_back(&ThreadPool::worker_loop, this, chunk);
  } catch (const std::exception&) {
    // Out of threads or memory: fewer workers only means fewer chunks per loop.
  }
}

ThreadPool::~ThreadPool() {
  stopping_.store(true);
  ticket_.store((++generation_) << kChunkBits);
  wake(sleeping_workers_, work_ready_);
  for (std::thread& worker : workers_)
    worker.join();
}

void ThreadPool::run(int64_t n, ansor_task_fn body, void* context) {
  const int64_t chunks = std::min<int64_t>(n, static_cast<int64_t>(workers_.size()) + 1);
  ParallelRegionScope region;
  if (chunks <= 1) {
    body(0, n, context);
    return;
  }
  body_ = body;
  context_ = context;
  n_ = n;
  pending_chunks_.store(chunks - 1, std::memory_order_relaxed);
  // Sequentially consistent, like every access to the ticket, pending count and sleeper counts:
  // a waiter announces it sleeps and then re-checks, a publisher publishes and then checks for
  // sleepers, and only a total order guarantees one of the two sees the other.
  ticket_.store((++generation_ << kChunkBits) | static_cast<uint64_t>(chunks));
  wake(sleeping_workers_, work_ready_);

  run_chunk(0, chunks);
  wait_until([this] { return pending_chunks_.load() == 0; }, sleeping_callers_, work_done_);
}

void ThreadPool::worker_loop(int64_t chunk_index) {
  t_in_parallel_region = true; // Everything a worker runs is a chunk of some loop.
  uint64_t seen = 0;
  for (;;) {
    uint64_t ticket = seen;
    wait_until(
        [&] {
          ticket = ticket_.load();
          return ticket != seen;
        },
        sleeping_workers_, work_ready_);
    seen = ticket;
    if (stopping_.load())
      return;
    // A loop with fewer chunks than workers leaves the rest idle; the caller does not wait for
    // them, so they must not touch the loop's fields.
    const int64_t chunks = static_cast<int64_t>(ticket & kChunkMask);
    if (chunk_index >= chunks)
      continue;
    run_chunk(chunk_index, chunks);
    if (pending_chunks_.fetch_sub(1) == 1)
      wake(sleeping_callers_, work_done_);
  }
}

void ThreadPool::run_chunk(int64_t index, int64_t count) {
  int64_t begin = 0;
  int64_t end = 0;
  chunk_bounds(n_, count, index, &begin, &end);
  body_(begin, end, context_);
}

template <class Ready>
void ThreadPool::wait_until(Ready ready, std::atomic<int>& sleepers,
                            std::condition_variable& wakeup) {
  for (int i = 0; i < spin_pauses_; ++i) {
    if (ready())
      return;
    cpu_relax();
  }
  for (int i = 0; i < kSpinYields; ++i) {
    if (ready())
      return;
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(sleep_mutex_);
  sleepers.fetch_add(1);
  wakeup.wait(lock, ready);
  sleepers.fetch_sub(1);
}

void ThreadPool::wake(std::atomic<int>& sleepers, std::condition_variable& wakeup) {
  if (sleepers.load() == 0)
    return;
  // Taking the mutex orders this notification after a sleeper's last check of its condition,
  // which it makes while holding the mutex.
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wakeup.notify_all();
}

} // namespace ansor::runtime
