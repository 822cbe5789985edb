// The masked loads and stores of kernel_support.h (the partial last vector of a ragged tile),
// compiled as kernels are (target ISA: AVX-512 masks on the Xeon) and, on x86-64, also for AVX2
// (maskload/maskstore) and SSE2 alone (the portable copy). Each vector ends exactly where a
// readable page does, followed by a page that may not be touched: a load or store of a masked
// lane would fault.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "ansor/kernel_support.h"

namespace {

// Two pages, the second inaccessible.
class GuardedPage {
 public:
  GuardedPage() : bytes_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
    void* p = ::mmap(nullptr, 2 * bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (base_) ::mprotect(base_ + bytes_, bytes_, PROT_NONE);
  }
  ~GuardedPage() {
    if (base_) ::munmap(base_, 2 * bytes_);
  }
  GuardedPage(const GuardedPage&) = delete;
  GuardedPage& operator=(const GuardedPage&) = delete;

  bool ok() const { return base_ != nullptr; }
  // The last n elements of the readable page.
  template <class T>
  T* last(int n) const {
    return reinterpret_cast<T*>(base_ + bytes_) - n;
  }

 private:
  size_t bytes_;
  char* base_ = nullptr;
};

// For every active count 0..N (and beyond, and negative): the active lanes are loaded, the
// others are 0; the active lanes are stored and nothing after them is written.
template <class T, int N>
void check_masked(const GuardedPage& page) {
  for (int64_t n = -1; n <= N + 1; ++n) {
    const int active = n < 0 ? 0 : n > N ? N : static_cast<int>(n);
    T* p = page.last<T>(active);
    T* before = p - 1;  // a neighbour the store must leave alone
    *before = T(-7);
    for (int i = 0; i < active; ++i) p[i] = T(i + 1);
    const ansor_rt::vec<T, N> v = ansor_rt::vload_masked<T, N>(p, n);
    for (int i = 0; i < N; ++i) EXPECT_EQ(v[i], i < active ? T(i + 1) : T(0)) << N << " lanes, " << n << " active, lane " << i;
    ansor_rt::vstore_masked<T, N>(p, v * T(3) + T(1), n);
    for (int i = 0; i < active; ++i) EXPECT_EQ(p[i], T(3 * (i + 1) + 1)) << N << " lanes, " << n << " active, lane " << i;
    EXPECT_EQ(*before, T(-7));
  }
}

TEST(KernelMaskedVectors, MaskedLanesAreNeitherLoadedNorStored) {
  GuardedPage page;
  ASSERT_TRUE(page.ok());
  check_masked<float, 4>(page);
  check_masked<float, 8>(page);
  check_masked<float, 16>(page);
  check_masked<float, 32>(page);
  check_masked<float, 64>(page);
  check_masked<double, 2>(page);
  check_masked<double, 4>(page);
  check_masked<double, 8>(page);
  check_masked<double, 16>(page);
}

}  // namespace
