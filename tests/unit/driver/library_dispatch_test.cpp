// The dispatcher of a library for several CPU targets: every function of the C interface
// forwards to each variant, the most demanding variant is tried first, and the choice honours
// ANSOR_KERNEL_TARGET.
#include "driver/library_dispatch.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ansor {
namespace {

TEST(LibraryDispatchTest, VariantsAreNamedByTheirTargetsAsCIdentifiers) {
  EXPECT_EQ(variant_lib_name("lib", "x86-64-v3"), "lib__x86_64_v3");
  EXPECT_EQ(variant_lib_name("lib", "host"), "lib__host");
}

TEST(LibraryDispatchTest, EveryFunctionForwardsToEveryVariantMostDemandingFirst) {
  Program p = test::parse(test::kTwoKernelsDef);
  std::string src = library_dispatcher(p, "lib",
                                       {{"x86-64-v3", "lib__x86_64_v3", {"avx2", "fma"}},
                                        {"x86-64-v4", "lib__x86_64_v4", {"avx2", "fma", "avx512f"}},
                                        {"x86-64-v2", "lib__x86_64_v2", {}}});
  // Most demanding first: v4 is case 0, v3 case 1, v2 (no feature) case 2.
  EXPECT_NE(src.find("{\"x86-64-v4\", runs_variant_0},\n    {\"x86-64-v3\", runs_variant_1},\n    {\"x86-64-v2\", runs_variant_2},"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("bool runs_variant_2() { return true; }"), std::string::npos);
  EXPECT_NE(src.find("__builtin_cpu_supports(\"avx512f\")"), std::string::npos);
  for (const char* fn : {"int lib_mm(const float* A, const float* B, float* C)", "int64_t lib_mm_B_packed_elements(void)",
                         "int lib_mm_pack_B(const float* B, float* B_packed)", "int lib_mm_packed(const float* A, const float* B, float* C)",
                         "int lib_add1(const int32_t* X, int32_t* Y)", "const ansor_kernel_info* lib_kernels(int* count)",
                         "const char* lib_target(void)"})
    EXPECT_NE(src.find(fn), std::string::npos) << fn << "\n" << src;
  EXPECT_NE(src.find("case 0: return lib__x86_64_v4_mm_packed(A, B, C);"), std::string::npos);
  EXPECT_NE(src.find("case 2: return lib__x86_64_v2_add1(X, Y);"), std::string::npos);
  EXPECT_NE(src.find("case 1: return lib__x86_64_v3_mm_B_packed_elements();"), std::string::npos);
  EXPECT_EQ(src.find("lib__x86_64_v3_add1_X_packed"), std::string::npos) << "add1 has no const input";
  EXPECT_NE(src.find("std::getenv(\"ANSOR_KERNEL_TARGET\")"), std::string::npos);
  EXPECT_NE(src.find("#include \"lib__x86_64_v2.h\""), std::string::npos);
}

TEST(LibraryDispatchTest, AvxVnniIsTestedThroughCpuid) {
  Program p = test::parse(test::kTwoKernelsDef);
  const std::string plain = library_dispatcher(p, "lib", {{"x86-64-v3", "lib__x86_64_v3", {"avx2", "fma"}}});
  EXPECT_EQ(plain.find("cpuid"), std::string::npos) << "only a library that needs it includes <cpuid.h>";
  const std::string src = library_dispatcher(p, "lib", {{"alderlake", "lib__alderlake", {"avx2", "fma", "avxvnni"}}, {"x86-64-v3", "lib__x86_64_v3", {"avx2", "fma"}}});
  EXPECT_NE(src.find("#include <cpuid.h>"), std::string::npos);
  EXPECT_NE(src.find("__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1u)"), std::string::npos) << src;
  EXPECT_NE(src.find("__builtin_cpu_supports(\"fma\") &&\n                                    cpu_has_avxvnni()"), std::string::npos) << src;
  EXPECT_EQ(src.find("__builtin_cpu_supports(\"avxvnni\")"), std::string::npos) << "clang 14 refuses that name";
}

}  // namespace
}  // namespace ansor
