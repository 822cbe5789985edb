// The memory hints of kernel_support.h (a stage's prefetch_bytes and stream_stores pragmas),
// compiled as kernels are (target ISA) and, on x86-64, also for AVX2 and SSE2 alone, so that
// streaming stores of 64, 32 and 16 bytes are each checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ansor/kernel_support.h"

namespace {

// Streaming stores write exactly the vector, at every alignment a float can have (streamed in
// pieces of the target's width, or whole when narrower, where aligned to that; stored normally
// elsewhere), for vectors of 4, 8, 16 and 32 lanes; the neighbours stay untouched.
template <int N>
void check_streaming_stores() {
  alignas(64) float buffer[3 * N + 32];
  ansor_rt::vec<float, N> v;
  for (int i = 0; i < N; ++i) v[i] = static_cast<float>(i + 1);
  for (int offset = 0; offset < 16; ++offset) {
    for (float& x : buffer) x = -1.0f;
    ansor_rt::vstore_stream<float, N>(buffer + N + offset, v);
    ansor_rt::store_fence();
    for (int i = 0; i < 3 * N + 32; ++i) {
      const bool inside = i >= N + offset && i < 2 * N + offset;
      EXPECT_EQ(buffer[i], inside ? static_cast<float>(i - N - offset + 1) : -1.0f) << N << " lanes, offset " << offset << ", element " << i;
    }
  }
}

TEST(KernelMemoryHints, StreamingStoresWriteTheVectorAtAnyAlignment) {
  check_streaming_stores<4>();
  check_streaming_stores<8>();
  check_streaming_stores<16>();
  check_streaming_stores<32>();
}

// A prefetch is a hint: addresses before, inside and far beyond a buffer are all harmless.
TEST(KernelMemoryHints, PrefetchesBeyondTheBufferAreHarmless) {
  std::vector<float> x(16, 2.0f);
  for (int64_t bytes : {int64_t{-4096}, int64_t{0}, int64_t{64}, int64_t{4096}, int64_t{1} << 30}) ansor_rt::prefetch(x.data(), bytes);
  EXPECT_EQ(x[15], 2.0f);
}

}  // namespace
