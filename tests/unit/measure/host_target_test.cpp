// The flags of a CPU target string: this machine's own with its flags as they are, another with
// the -march of its CPU field where that gives the ISA and tensor features it names, and any
// other refused with a message naming what it asks for and what the flags give.
#include "measure/host_target.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "measure/cpu_variant.h"

namespace ansor {
namespace {

using Flags = std::vector<std::string>;

// The message of the std::invalid_argument that flags_for_target_string throws; empty when it
// returns flags.
std::string refusal(const std::string& target, const KernelCompiler& compiler) {
  try {
    flags_for_target_string(target, compiler);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

class TargetStringFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (detect_host(compiler_).arch != "x86_64") GTEST_SKIP() << "the CPU names of these tests are x86-64's";
  }
  KernelCompiler compiler_ = make_kernel_compiler("", {"-O3", "-march=native", "-ffp-contract=fast"});
};

TEST_F(TargetStringFlagsTest, ACpuFieldThatIsAMarchCpuBuildsWithThatMarch) {
  EXPECT_EQ(flags_for_target_string("cpu:x86_64:x86-64-v3:avx2:t2", compiler_), (Flags{"-O3", "-march=x86-64-v3", "-ffp-contract=fast"}));
  EXPECT_EQ(flags_for_target_string("cpu:x86_64:skylake-avx512:avx512:t8", compiler_),
            (Flags{"-O3", "-march=skylake-avx512", "-ffp-contract=fast"}));
  // As for a CPU name, another CPU choice in the user's flags would contradict the target.
  compiler_.flags = {"-O2", "-march=haswell"};
  EXPECT_EQ(flags_for_target_string("cpu:x86_64:x86-64-v3:avx2:t2", compiler_), (Flags{"-O2", "-march=x86-64-v3"}));
}

TEST_F(TargetStringFlagsTest, AStringWhoseIsaTheFlagsDoNotGiveIsRefusedNamingBoth) {
  EXPECT_NE(refusal("cpu:x86_64:x86-64-v3:avx512:t2", compiler_).find("target cpu:x86_64:x86-64-v3:avx512:t2 names ISA avx512 but "
                                                                       "-march=x86-64-v3 gives avx2"),
            std::string::npos);
  // The tensor features are part of what the string asks for, in both directions.
  EXPECT_NE(refusal("cpu:x86_64:x86-64-v4:avx512+avx512vnni:t2", compiler_).find("names ISA avx512+avx512vnni but -march=x86-64-v4 gives avx512"),
            std::string::npos);
  EXPECT_NE(refusal("cpu:x86_64:alderlake:avx2:t2", compiler_).find("names ISA avx2 but -march=alderlake gives avx2+avxvnni"), std::string::npos);
}

TEST_F(TargetStringFlagsTest, ACpuTheCompilerDoesNotKnowOrAnotherArchitectureIsRefused) {
  const std::string unknown = refusal("cpu:x86_64:testcpu:avx2:t2", compiler_);
  EXPECT_NE(unknown.find("target cpu:x86_64:testcpu:avx2:t2 names CPU testcpu: it is not this machine's own target"), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("the compiler refuses -march=testcpu: "), std::string::npos) << unknown;
  EXPECT_NE(refusal("cpu:aarch64:neoverse-v1:neon:t2", compiler_).find("target cpu:aarch64:neoverse-v1:neon:t2 is for aarch64, but this "
                                                                     "machine builds kernels for x86_64"),
            std::string::npos);
}

// What `host` resolves to keeps the flags that resolve to it, -march=native, whatever its CPU
// field (x86-64 where the compiler has no name for this CPU, which -march=x86-64 would not
// reproduce) and whatever its thread count.
TEST(TargetStringFlagsOfTheHostTest, TheHostsOwnStringKeepsItsFlags) {
  const KernelCompiler compiler = make_kernel_compiler("", {"-O3", "-march=native"});
  Target host = detect_host(compiler);
  EXPECT_EQ(flags_for_target_string(host.to_string(), compiler), compiler.flags) << host.to_string();
  host.threads = 7;
  EXPECT_EQ(flags_for_target_string(host.to_string(), compiler), compiler.flags) << host.to_string();
}

}  // namespace
}  // namespace ansor
