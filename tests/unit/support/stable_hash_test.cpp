// Stable hashes: fixed values, whatever the standard library or machine.
#include "support/stable_hash.h"

#include <gtest/gtest.h>

namespace ansor {
namespace {

TEST(StableHashTest, IsXxh64) {
  EXPECT_EQ(stable_hash64(""), 0xEF46DB3751D8E999ull);  // XXH64 of no bytes, seed 0
  EXPECT_NE(stable_hash64("mm"), stable_hash64("mm", 1));
}

}  // namespace
}  // namespace ansor
