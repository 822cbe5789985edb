// Buffers for kernel arguments aligned to a cache line, as a deployment allocates its tensors and
// as kernels allocate their own workspaces: a vector load of a packed weight tile then never
// straddles two lines because of where malloc happened to put the buffer (16 bytes past a line
// for glibc's large blocks), so what tuning measures and a benchmark reports is the program's
// speed, not its buffers' placement.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace ansor {

inline constexpr std::size_t kArgumentAlignment = 64;

template <class T>
struct CacheLineAllocator {
  using value_type = T;

  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kArgumentAlignment})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kArgumentAlignment}); }

  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const {
    return false;
  }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace ansor
