// The seed of each kernel's random schedule (emit --schedule random): fixed values, whatever the
// standard library or machine, different per kernel.
#include <gtest/gtest.h>

#include "driver/library_emitter.h"
#include "support/stable_hash.h"

namespace ansor {
namespace {

TEST(RandomScheduleSeedTest, PerKernelRandomSeedsAreFixed) {
  EXPECT_EQ(random_schedule_seed(0, "mm"), stable_hash64("mm"));
  EXPECT_EQ(random_schedule_seed(0, "mm"), 0x1ED74675B221CF82ull);
  EXPECT_EQ(random_schedule_seed(5, "mm"), 0x1ED74675B221CF82ull ^ 5u);
  EXPECT_NE(random_schedule_seed(0, "mm"), random_schedule_seed(0, "add1"));
}

}  // namespace
}  // namespace ansor
