// ansor_workspace_alloc / ansor_workspace_free: 64-byte aligned blocks for intermediate
// tensors, with a small per-thread cache of freed blocks so that a kernel called in a loop
// reuses its memory instead of going back to malloc (and the page faults of fresh memory).
#include "ansor/runtime.h"

#include <cstdint>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define ANSOR_RUNTIME_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ANSOR_RUNTIME_ASAN 1
#endif
#endif

#ifdef ANSOR_RUNTIME_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace {

constexpr size_t kAlignment = 64;
// Each block is preceded by a header, one alignment unit long, that records its capacity, so
// that free() knows the size without the caller passing it.
constexpr size_t kHeaderBytes = kAlignment;
constexpr int kMaxCachedBlocks = 4;
constexpr size_t kMaxCachedBytes = size_t{64} << 20;

struct BlockHeader {
  size_t capacity;
};

BlockHeader* header_of(void* block) {
  return reinterpret_cast<BlockHeader*>(static_cast<char*>(block) - kHeaderBytes);
}

// Cached blocks are poisoned under AddressSanitizer, so that a kernel touching workspace after
// freeing it is still reported although the memory never went back to malloc.
void poison(void* block, size_t capacity) {
#ifdef ANSOR_RUNTIME_ASAN
  ASAN_POISON_MEMORY_REGION(block, capacity);
#else
  (void)block;
  (void)capacity;
#endif
}

void unpoison(void* block, size_t capacity) {
#ifdef ANSOR_RUNTIME_ASAN
  ASAN_UNPOISON_MEMORY_REGION(block, capacity);
#else
  (void)block;
  (void)capacity;
#endif
}

void release_to_system(void* block) { std::free(static_cast<char*>(block) - kHeaderBytes); }

struct CachedBlock {
  void* block;
  size_t capacity;
};

// Trivially constructible and destructible, so it is usable at any point of a thread's life,
// including from other thread_local destructors after the cache has been emptied.
struct ThreadCache {
  CachedBlock blocks[kMaxCachedBlocks]; // Oldest first.
  int count;
  size_t bytes;
  bool closed; // Set at thread exit: later frees go straight to the system.
};
thread_local ThreadCache t_cache;

void remove_cached(int index) {
  t_cache.bytes -= t_cache.blocks[index].capacity;
  for (int i = index + 1; i < t_cache.count; ++i)
    t_cache.blocks[i - 1] = t_cache.blocks[i];
  --t_cache.count;
}

void release_cache() {
  for (int i = 0; i < t_cache.count; ++i) {
    unpoison(t_cache.blocks[i].block, t_cache.blocks[i].capacity);
    release_to_system(t_cache.blocks[i].block);
  }
  t_cache.count = 0;
  t_cache.bytes = 0;
}

struct CacheCloser {
  ~CacheCloser() {
    release_cache();
    t_cache.closed = true;
  }
};

// The closer is a function-local thread_local so that it is constructed, and its destructor
// registered, exactly in the threads that cache something.
void close_cache_at_thread_exit() {
  thread_local CacheCloser closer;
  (void)closer;
}

// The smallest cached block that fits without wasting more than the request itself.
void* take_cached(size_t capacity) {
  int best = -1;
  for (int i = 0; i < t_cache.count; ++i) {
    const size_t candidate = t_cache.blocks[i].capacity;
    if (candidate >= capacity && candidate / 2 <= capacity &&
        (best < 0 || candidate < t_cache.blocks[best].capacity))
      best = i;
  }
  if (best < 0)
    return nullptr;
  const CachedBlock found = t_cache.blocks[best];
  remove_cached(best);
  unpoison(found.block, found.capacity);
  return found.block;
}

} // namespace

void* ansor_workspace_alloc(size_t bytes) {
  if (bytes > SIZE_MAX - kHeaderBytes - kAlignment)
    return nullptr;
  // Zero bytes still yields a distinct block, which keeps callers free of special cases.
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  const size_t capacity = rounded == 0 ? kAlignment : rounded;
  if (void* cached = take_cached(capacity))
    return cached;
  void* base = std::aligned_alloc(kAlignment, kHeaderBytes + capacity);
  if (base == nullptr)
    return nullptr;
  static_cast<BlockHeader*>(base)->capacity = capacity;
  return static_cast<char*>(base) + kHeaderBytes;
}

void ansor_workspace_free(void* block) {
  if (block == nullptr)
    return;
  const size_t capacity = header_of(block)->capacity;
  if (t_cache.closed || capacity > kMaxCachedBytes) {
    release_to_system(block);
    return;
  }
  close_cache_at_thread_exit();
  while (t_cache.count == kMaxCachedBlocks || t_cache.bytes + capacity > kMaxCachedBytes) {
    unpoison(t_cache.blocks[0].block, t_cache.blocks[0].capacity);
    release_to_system(t_cache.blocks[0].block);
    remove_cached(0);
  }
  poison(block, capacity);
  t_cache.blocks[t_cache.count++] = CachedBlock{block, capacity};
  t_cache.bytes += capacity;
}
