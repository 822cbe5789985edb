// Target strings: what parses, what round-trips, and what is refused with a reason.
#include "target/target.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

TEST(TargetTest, TensorFeaturesArePartOfTheName) {
  Target t = parse_target("cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2");
  EXPECT_EQ(t.isa, "avx512");
  EXPECT_EQ(t.vector_bits(), 512);
  EXPECT_EQ(t.tensor_features, (std::vector<std::string>{"avx512bf16", "avx512vnni"}));
  EXPECT_TRUE(t.has_tensor_feature("avx512vnni"));
  EXPECT_FALSE(t.has_tensor_feature("amx-int8"));
  EXPECT_EQ(t.to_string(), "cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2");
  EXPECT_FALSE(t.compatible_with(parse_target("cpu:x86_64:znver4:avx512:t2")));
  EXPECT_EQ(parse_target("cpu:x86_64:alderlake:avx2+avxvnni:t2").tensor_features, std::vector<std::string>{"avxvnni"});
}

TEST(TargetTest, RecordsWithoutATensorFeatureReplayWhereItIsButNotTheReverse) {
  Target plain = parse_target("cpu:x86_64:znver4:avx512:t2");
  Target vnni = parse_target("cpu:x86_64:znver4:avx512+avx512vnni:t2");
  Target amx = parse_target("cpu:x86_64:sapphirerapids:avx512+amx-bf16+amx-int8+amx-tile+avx512bf16+avx512vnni:t2");
  EXPECT_TRUE(plain.same_isa(vnni));
  EXPECT_TRUE(vnni.same_isa(amx));
  EXPECT_FALSE(vnni.same_isa(plain));
  EXPECT_FALSE(amx.same_isa(vnni));
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

TEST(TargetTest, UnknownOrMisorderedTensorFeaturesAreRefused) {
  for (const char* text : {"cpu:x86_64:znver4:avx512+sse9:t2", "cpu:x86_64:znver4:avx512+avx512vnni+avx512bf16:t2",
                           "cpu:x86_64:znver4:avx512+avx512vnni+avx512vnni:t2", "cpu:x86_64:znver4:avx512+:t2"}) {
    EXPECT_THROW(parse_target(text), std::invalid_argument) << text;
  }
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
