// ansor_parallel_for and the backend setting: decides how each loop runs (inline, on the
// user's executor, or on the built-in pool) and owns the pool's lifetime: lazy creation,
// resizing when the thread count changes, reset in a forked child, and shutdown at exit.
#include "ansor/runtime.h"
#include "parallel_region.h"
#include "thread_pool.h"

#include <atomic>
#include <mutex>
#include <new>

#include <pthread.h>

namespace {

using ansor::runtime::ParallelRegionScope;
using ansor::runtime::t_in_parallel_region;
using ansor::runtime::ThreadPool;

// Held by the one caller that uses the pool; another caller that finds it held runs its loop
// inline rather than waiting, so concurrent callers can never deadlock.
std::atomic<bool> g_pool_busy{false};
ThreadPool* g_pool = nullptr; // Guarded by g_pool_busy.

// Pools inherited through fork(): their workers do not exist in the child, so they can be
// neither joined nor destroyed. They stay listed here so leak checkers see them as reachable.
ThreadPool* g_orphaned_pools = nullptr;

// The backend pointer is read on every loop without a lock; the mutex keeps the pair (backend,
// user) consistent when a backend is set.
std::mutex g_backend_mutex;
std::atomic<ansor_parallel_backend> g_backend{nullptr};
void* g_backend_user = nullptr; // Guarded by g_backend_mutex.

void lock_before_fork() { g_backend_mutex.lock(); }
void unlock_in_parent() { g_backend_mutex.unlock(); }

void reset_in_child() {
  g_backend_mutex.unlock();
  if (g_pool != nullptr) {
    g_pool->next_orphan = g_orphaned_pools;
    g_orphaned_pools = g_pool;
    g_pool = nullptr;
  }
  // Whoever held the pool in the parent is not in the child.
  g_pool_busy.store(false);
}

void register_fork_handlers() {
  static const bool registered =
      pthread_atfork(lock_before_fork, unlock_in_parent, reset_in_child) == 0;
  (void)registered;
}

// Joins the workers at exit, so that none is left running into static destruction. The pool
// stays marked busy afterwards: loops from later destructors run inline.
struct PoolShutdown {
  ~PoolShutdown() {
    if (g_pool_busy.exchange(true))
      return; // A loop is still running on the pool (from another thread); leave it be.
    delete g_pool;
    g_pool = nullptr;
  }
};
PoolShutdown g_pool_shutdown;

void run_inline(int64_t n, ansor_task_fn body, void* context) {
  ParallelRegionScope region;
  body(0, n, context);
}

// A user backend may run chunks on any thread, its caller included: each chunk is wrapped so
// that loops nested inside it are recognised and run inline.
struct BackendTask {
  ansor_task_fn body;
  void* context;
};

void run_backend_chunk(int64_t begin, int64_t end, void* task) {
  const BackendTask* backend_task = static_cast<const BackendTask*>(task);
  ParallelRegionScope region;
  backend_task->body(begin, end, backend_task->context);
}

bool run_on_backend(int64_t n, ansor_task_fn body, void* context) {
  if (g_backend.load(std::memory_order_acquire) == nullptr)
    return false;
  ansor_parallel_backend backend = nullptr;
  void* user = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_backend_mutex);
    backend = g_backend.load(std::memory_order_relaxed);
    user = g_backend_user;
  }
  if (backend == nullptr)
    return false;
  BackendTask task{body, context};
  backend(n, run_backend_chunk, &task, user);
  return true;
}

// Returns a pool with the wanted thread count, rebuilding it if the count changed; nullptr if
// none can be made. The caller holds g_pool_busy.
ThreadPool* pool_for(int num_threads) {
  if (g_pool != nullptr && g_pool->requested_threads() != num_threads) {
    // Unpublished before it is destroyed: a fork in between must not orphan a freed pool.
    ThreadPool* old_pool = g_pool;
    g_pool = nullptr;
    delete old_pool;
  }
  if (g_pool == nullptr) {
    register_fork_handlers();
    g_pool = new (std::nothrow) ThreadPool(num_threads);
  }
  return g_pool;
}

} // namespace

int ansor_parallel_for(int64_t n, ansor_task_fn body, void* context) {
  if (n <= 0)
    return 0;
  if (t_in_parallel_region) {
    body(0, n, context);
    return 0;
  }
  if (run_on_backend(n, body, context))
    return 0;
  const int num_threads = ansor_get_num_threads();
  if (num_threads <= 1 || n == 1 || g_pool_busy.exchange(true, std::memory_order_acquire)) {
    run_inline(n, body, context);
    return 0;
  }
  if (ThreadPool* pool = pool_for(num_threads))
    pool->run(n, body, context);
  else
    run_inline(n, body, context);
  g_pool_busy.store(false, std::memory_order_release);
  return 0;
}

void ansor_set_parallel_backend(ansor_parallel_backend backend, void* user) {
  register_fork_handlers();
  std::lock_guard<std::mutex> lock(g_backend_mutex);
  g_backend_user = user;
  g_backend.store(backend, std::memory_order_release);
}

void ansor_get_spin_wait(int* pauses, int* yields) {
  *pauses = ansor::runtime::spin_pauses_for(ansor_get_num_threads());
  *yields = ansor::runtime::spin_yields();
}
