// Target strings: what parses, what round-trips, and what is refused with a reason.
#include "target/target.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace ansor {
namespace {

TEST(TargetTest, CpuTargetRoundTripsThroughItsString) {
  Target t = parse_target("cpu:x86_64:rocketlake:avx512:t2");
  EXPECT_EQ(t.kind, Target::Kind::Cpu);
  EXPECT_EQ(t.arch, "x86_64");
  EXPECT_EQ(t.cpu, "rocketlake");
  EXPECT_EQ(t.isa, "avx512");
  EXPECT_EQ(t.threads, 2);
  EXPECT_EQ(t.vector_bits(), 512);
  EXPECT_EQ(t.to_string(), "cpu:x86_64:rocketlake:avx512:t2");
  EXPECT_EQ(t.file_stem(), "cpu-x86_64-rocketlake-avx512-t2");
}

TEST(TargetTest, CudaTargetNamesItsArchitecture) {
  Target t = parse_target("cuda:sm_80");
  EXPECT_EQ(t.kind, Target::Kind::Cuda);
  EXPECT_EQ(t.cpu, "sm_80");
  EXPECT_EQ(t.to_string(), "cuda:sm_80");
}

TEST(TargetTest, CachesAreNotPartOfCompatibility) {
  Target a = parse_target("cpu:aarch64:neoverse-v1:neon:t4");
  Target b = a;
  b.l2_bytes = 1 << 20;
  b.cores = 64;
  EXPECT_TRUE(a.compatible_with(b));
  b.threads = 8;
  EXPECT_FALSE(a.compatible_with(b));
}

TEST(TargetTest, MalformedStringsAreRefusedWithAReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"cuda", "names its architecture"},
      {"cuda:80", "names its architecture"},
      {"cpu:x86_64", "unknown form"},
      {"cpu:x86_64:sky lake:avx2:t2", "'sky lake' is not a name"},
      {"cpu:x86_64:skylake:avx2:2", "thread count"},
      {"cpu:x86_64:skylake:avx2:t0", "thread count"},
  };
  for (const auto& [text, reason] : cases) {
    try {
      parse_target(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << text << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace ansor
