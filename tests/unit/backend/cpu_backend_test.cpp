// The CPU backend's flags and measurability per way of naming a target: host and CPU names as
// before, a full target string with the flags that build what it names (or refused), and a
// target string this CPU cannot run refused for tuning as a CPU name is.
#include "backend/cpu_backend.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "backend/backend_registry.h"
#include "measure/host_target.h"

namespace ansor {
namespace {

using Flags = std::vector<std::string>;

class CpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (detect_host(make_kernel_compiler()).arch != "x86_64") GTEST_SKIP() << "the CPU names of these tests are x86-64's";
  }
  // The flags the request's target builds with, from the default ones.
  Flags flags_for(const std::string& target) const { return cpu_.kernel_flags({target, "", {}}); }
  // The defaults with -march=native made -march=`cpu`.
  static Flags defaults_with(const std::string& march) {
    Flags out = default_kernel_flags();
    for (std::string& f : out)
      if (f == "-march=native") f = march;
    return out;
  }

  const Backend& cpu_ = backend_for(Target::Kind::Cpu);
};

TEST_F(CpuBackendTest, HostAndCpuNamesKeepTheirFlags) {
  EXPECT_EQ(flags_for("host"), default_kernel_flags());
  EXPECT_EQ(flags_for("x86-64-v3"), defaults_with("-march=x86-64-v3"));
}

TEST_F(CpuBackendTest, ATargetStringBuildsWithTheMarchOfItsCpu) {
  EXPECT_EQ(flags_for("cpu:x86_64:x86-64-v3:avx2:t2"), defaults_with("-march=x86-64-v3"));
  // What the build compiles with (and keys the records by) is the same.
  const std::string cmake = cpu_.cmake_variant({"cpu:x86_64:x86-64-v3:avx2:t2", "clang++", {"-O2", "-march=native"}}, "lib", "/rt");
  EXPECT_NE(cmake.find("set(ANSOR_KERNEL_FLAGS_lib \"-O2\" \"-march=x86-64-v3\")"), std::string::npos) << cmake;
  EXPECT_EQ(cmake.find("native"), std::string::npos) << cmake;
}

TEST_F(CpuBackendTest, ATargetStringWhoseIsaItsFlagsDoNotGiveIsRefused) {
  try {
    flags_for("cpu:x86_64:x86-64-v3:avx512:t2");
    FAIL() << "an AVX-512 target built with -march=x86-64-v3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("target cpu:x86_64:x86-64-v3:avx512:t2 names ISA avx512 but -march=x86-64-v3 gives avx2"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CpuBackendTest, TheHostsOwnStringBuildsAndMeasuresAsTheHost) {
  const KernelBuildRequest request{detect_host(make_kernel_compiler()).to_string(), "", {}};
  EXPECT_EQ(cpu_.kernel_flags(request), default_kernel_flags()) << request.target;
  const KernelCompiler compiler = cpu_.kernel_compiler(request);
  EXPECT_EQ(cpu_.cannot_measure(request, parse_target(request.target), compiler), "");
}

// The user's flags stand for the CPU here: -march=x86-64-v2 builds for one without AVX.
TEST_F(CpuBackendTest, TuningForATargetStringThisCpuCannotRunIsRefused) {
  const KernelBuildRequest request{"cpu:x86_64:x86-64-v3:avx2:t2", "", {"-O3", "-march=x86-64-v2"}};
  const KernelCompiler compiler = cpu_.kernel_compiler(request);
  EXPECT_EQ(compiler.flags, (Flags{"-O3", "-march=x86-64-v3"}));
  const std::string why = cpu_.cannot_measure(request, parse_target(request.target), compiler);
  EXPECT_EQ(why.rfind("tuning for cpu:x86_64:x86-64-v3:avx2:t2 needs a CPU that runs its code: this one lacks avx, avx2", 0), 0u) << why;
  // With the flags of this machine, a CPU level it runs can be tuned.
  const KernelBuildRequest here{"cpu:x86_64:x86-64-v2:sse4:t2", "", {}};
  EXPECT_EQ(cpu_.cannot_measure(here, parse_target(here.target), cpu_.kernel_compiler(here)), "");
}

}  // namespace
}  // namespace ansor
