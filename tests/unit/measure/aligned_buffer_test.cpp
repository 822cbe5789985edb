// Kernel arguments of the measurement worker and the benchmarks start on a cache line.
#include "measure/aligned_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace ansor {
namespace {

TEST(AlignedBufferTest, EveryBufferStartsOnACacheLine) {
  for (std::size_t n : {1u, 3u, 17u, 1000u, 9408u, 1u << 20}) {
    AlignedVector<float> floats(n, 1.0f);
    AlignedVector<unsigned char> bytes(n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(floats.data()) % kArgumentAlignment, 0u) << n;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes.data()) % kArgumentAlignment, 0u) << n;
    AlignedVector<float> copy = floats;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copy.data()) % kArgumentAlignment, 0u) << n;
    EXPECT_EQ(copy, floats);
  }
}

}  // namespace
}  // namespace ansor
