// Replaces the global operator new and delete of the test program with versions that count
// allocations, for the zero-allocation checks of kernel_support.h. Every non-aligned form is
// replaced, so that memory from any of them meets a matching delete; the aligned forms keep
// the standard library's own pairing. Under ThreadSanitizer, whose runtime defines these
// functions itself, nothing is replaced and nothing is counted.
#include "allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_THREAD__)
#define ANSOR_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ANSOR_TEST_TSAN 1
#endif
#endif

namespace {

std::atomic<uint64_t> g_allocations{0};

} // namespace

namespace ansor_test {

uint64_t heap_allocations() { return g_allocations.load(std::memory_order_relaxed); }

bool heap_allocations_counted() {
#ifdef ANSOR_TEST_TSAN
  return false;
#else
  return true;
#endif
}

} // namespace ansor_test

#ifndef ANSOR_TEST_TSAN

namespace {

void* counted_allocation(std::size_t bytes) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(bytes == 0 ? 1 : bytes);
}

void* counted_allocation_or_throw(std::size_t bytes) {
  if (void* block = counted_allocation(bytes))
    return block;
  throw std::bad_alloc();
}

} // namespace

void* operator new(std::size_t bytes) { return counted_allocation_or_throw(bytes); }
void* operator new[](std::size_t bytes) { return counted_allocation_or_throw(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  return counted_allocation(bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return counted_allocation(bytes);
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { std::free(block); }
void operator delete[](void* block, const std::nothrow_t&) noexcept { std::free(block); }

#endif // ANSOR_TEST_TSAN
