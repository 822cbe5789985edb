// Tests that ANSOR_NUM_THREADS sets the default thread count and that malformed values are
// ignored. The variable is read once per process, so CMake runs this test in processes of its
// own with ANSOR_NUM_THREADS set and ANSOR_TEST_EXPECTED_THREADS saying what should result
// ("default": the CPUs of the affinity mask).
#include "ansor/runtime.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

using ansor_test::ChunkRecorder;

TEST(EnvNumThreads, DefaultFollowsTheEnvironment) {
  const char* configured = std::getenv("ANSOR_NUM_THREADS");
  const char* expectation = std::getenv("ANSOR_TEST_EXPECTED_THREADS");
  if (expectation == nullptr && configured != nullptr)
    GTEST_SKIP() << "ANSOR_NUM_THREADS is set without ANSOR_TEST_EXPECTED_THREADS";

  const bool expect_default = expectation == nullptr || std::string(expectation) == "default";
  const int expected = expect_default ? ansor_test::affinity_cpu_count() : std::atoi(expectation);
  ASSERT_GT(expected, 0);
  EXPECT_EQ(ansor_get_num_threads(), expected);

  ChunkRecorder recorder;
  ansor_parallel_for(64, ChunkRecorder::task, &recorder);
  EXPECT_EQ(recorder.sorted().size(), static_cast<size_t>(std::min(expected, 64)));

  // The explicit setting overrides the environment, and resetting returns to it.
  ansor_set_num_threads(2);
  EXPECT_EQ(ansor_get_num_threads(), 2);
  ansor_set_num_threads(0);
  EXPECT_EQ(ansor_get_num_threads(), expected);
}

} // namespace
