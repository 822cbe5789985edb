// Stable hashes: fixed values, whatever the standard library or machine.
#include "support/stable_hash.h"

#include <gtest/gtest.h>

#include "driver/library_emitter.h"

namespace ansor {
namespace {

TEST(StableHashTest, IsXxh64) {
  EXPECT_EQ(stable_hash64(""), 0xEF46DB3751D8E999ull);  // XXH64 of no bytes, seed 0
  EXPECT_NE(stable_hash64("mm"), stable_hash64("mm", 1));
}

TEST(StableHashTest, PerKernelRandomSeedsAreFixed) {
  EXPECT_EQ(random_schedule_seed(0, "mm"), stable_hash64("mm"));
  EXPECT_EQ(random_schedule_seed(0, "mm"), 0x1ED74675B221CF82ull);
  EXPECT_EQ(random_schedule_seed(5, "mm"), 0x1ED74675B221CF82ull ^ 5u);
  EXPECT_NE(random_schedule_seed(0, "mm"), random_schedule_seed(0, "add1"));
}

}  // namespace
}  // namespace ansor
