// Named CPU levels: which targets are CPU names, the flags that build for them, and the CPU
// features the kernel compiler says their code may use.
#include "measure/cpu_variant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace ansor {
namespace {

using Flags = std::vector<std::string>;

TEST(CpuVariantTest, CpuNamesAreNeitherHostNorGpuNorTargetStrings) {
  EXPECT_TRUE(is_cpu_name("x86-64-v3"));
  EXPECT_TRUE(is_cpu_name("skylake-avx512"));
  EXPECT_FALSE(is_cpu_name("host"));
  EXPECT_FALSE(is_cpu_name("cuda"));
  EXPECT_FALSE(is_cpu_name("cuda:sm_80"));
  EXPECT_FALSE(is_cpu_name("cpu:x86_64:znver3:avx2:t2"));
  EXPECT_FALSE(is_cpu_name(""));
}

TEST(CpuVariantTest, ANamedCpuReplacesNativeAndNeverKeepsIt) {
  EXPECT_EQ(flags_for_cpu({"-O3", "-march=native", "-ffp-contract=fast"}, "x86-64-v3"),
            (Flags{"-O3", "-march=x86-64-v3", "-ffp-contract=fast"}));
  EXPECT_EQ(flags_for_cpu({"-O2", "-mcpu=native"}, "x86-64-v4"), (Flags{"-O2", "-march=x86-64-v4"}));
  EXPECT_EQ(flags_for_cpu({"-O3", "-march=haswell"}, "x86-64-v2"), (Flags{"-O3", "-march=x86-64-v2"}));
  EXPECT_EQ(flags_for_cpu({"-O3"}, "x86-64-v3"), (Flags{"-O3", "-march=x86-64-v3"}));
  EXPECT_EQ(flags_for_cpu({"-O3", "-march=native"}, "host"), (Flags{"-O3", "-march=native"}));
  EXPECT_EQ(flags_for_cpu({"-O3", "-march=native"}, "cpu:x86_64:znver3:avx2:t2"), (Flags{"-O3", "-march=native"}));
}

TEST(CpuVariantTest, TheCompilerSaysWhichFeaturesALevelUses) {
  KernelCompiler compiler = make_kernel_compiler("", {"-O3", "-march=x86-64-v3"});
  std::vector<std::string> v3 = cpu_features(compiler);
  for (const char* f : {"sse4.2", "popcnt", "avx", "avx2", "fma", "bmi2"})
    EXPECT_NE(std::find(v3.begin(), v3.end(), f), v3.end()) << f;
  EXPECT_EQ(std::find(v3.begin(), v3.end(), "avx512f"), v3.end());
  compiler.flags = {"-O3", "-march=x86-64-v4"};
  std::vector<std::string> v4 = cpu_features(compiler);
  EXPECT_NE(std::find(v4.begin(), v4.end(), "avx512f"), v4.end());
  EXPECT_TRUE(missing_features(v3, v4).empty()) << "v4 runs what v3 needs";
  EXPECT_EQ(missing_features(v4, v3), (Flags{"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}));
}

// AMX from either compiler's macros (GCC's __AMX_TILE__, clang 14's __AMXTILE__), each feature
// once where a compiler defines both spellings.
TEST(CpuVariantTest, AmxIsListedFromEitherCompilersMacros) {
  int compilers = 0;
  for (const char* path : {"", "g++"}) {
    KernelCompiler compiler;
    try {
      compiler = make_kernel_compiler(path, {"-O3", "-march=sapphirerapids"});
    } catch (const std::runtime_error&) {
      continue;  // no g++ here
    }
    ++compilers;
    SCOPED_TRACE(compiler.version);
    const std::vector<std::string> spr = cpu_features(compiler);
    for (const char* f : {"amx-bf16", "amx-int8", "amx-tile", "avx512bf16", "avx512vnni"})
      EXPECT_NE(std::find(spr.begin(), spr.end(), f), spr.end()) << f;
    compiler.flags = {"-O3", "-march=sapphirerapids", "-D__AMX_TILE__=1", "-D__AMXTILE__=1"};
    const std::vector<std::string> both = cpu_features(compiler);
    EXPECT_EQ(std::count(both.begin(), both.end(), "amx-tile"), 1);
    compiler.flags = {"-O3", "-march=x86-64-v4"};
    const std::vector<std::string> v4 = cpu_features(compiler);
    for (const char* f : {"amx-bf16", "amx-int8", "amx-tile"}) EXPECT_EQ(std::find(v4.begin(), v4.end(), f), v4.end()) << f;
  }
  EXPECT_GE(compilers, 1);
}

}  // namespace
}  // namespace ansor
