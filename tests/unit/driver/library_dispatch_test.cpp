// The dispatcher of a library for several CPU targets: every function of the C interface
// forwards to each variant, the most demanding variant is tried first, and the choice honours
// ANSOR_KERNEL_TARGET.
#include "driver/library_dispatch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "driver/library_emitter.h"
#include "measure/compiler.h"
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

// A library with an AMX variant: the dispatcher tests AMX's CPUID bits, the OS's tile state and
// the process's permission (never __builtin_cpu_supports, which clang 14 lacks for AMX).
TEST(LibraryDispatchTest, AmxIsTestedThroughCpuidXcr0AndThePermission) {
  Program p = test::parse(test::kTwoKernelsDef);
  const std::string plain = library_dispatcher(p, "lib", {{"x86-64-v3", "lib__x86_64_v3", {"avx2", "fma"}}});
  EXPECT_EQ(plain.find("amx"), std::string::npos);
  EXPECT_EQ(plain.find("tensor_intrinsics.h"), std::string::npos) << "only a library with AMX variants asks for the permission";
  const std::string src = library_dispatcher(
      p, "lib", {{"sapphirerapids", "lib__sapphirerapids", {"avx2", "amx-bf16", "amx-int8", "amx-tile"}}, {"x86-64", "lib__x86_64", {}}});
  EXPECT_NE(src.find("#include \"lib__x86_64.h\"\n#include \"ansor/tensor_intrinsics.h\"\n\n#include <cpuid.h>\n"), std::string::npos) << src;
  EXPECT_NE(src.find("return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> edx_bit & 1u);"), std::string::npos) << src;
  EXPECT_NE(src.find("if (!cpu_has_amx(24) || !__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1u)) return false;"), std::string::npos);
  EXPECT_NE(src.find("__asm__ __volatile__(\"xgetbv\" : \"=a\"(xcr0_low), \"=d\"(xcr0_high) : \"c\"(0));"), std::string::npos);
  EXPECT_NE(src.find("return (xcr0_low >> 17 & 3u) == 3u && ansor_rt::request_amx_permission();"), std::string::npos);
  EXPECT_NE(src.find("// sapphirerapids: avx2, amx-bf16, amx-int8, amx-tile\n"
                     "bool runs_variant_0() { return __builtin_cpu_supports(\"avx2\") &&\n"
                     "                                    cpu_has_amx(22) &&\n"
                     "                                    cpu_has_amx(25) &&\n"
                     "                                    amx_tiles_usable(); }"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("__builtin_cpu_supports(\"amx"), std::string::npos) << "clang 14 refuses those names";
}

#if defined(__x86_64__) && defined(__linux__)
// Whether this process may use AMX's tiles, found out apart from the runtime and the dispatcher:
// CPUID's three features, the OS's tile state in XCR0, and Linux's answer to the permission
// request (asking again changes nothing).
bool amx_usable_here() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned amx = 1u << 22 | 1u << 24 | 1u << 25;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || (d & amx) != amx) return false;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1u)) return false;
  unsigned low = 0, high = 0;
  __asm__ __volatile__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (low >> 17 & 3u) == 3u && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}
#endif

// The dispatcher of a library with an AMX variant and a baseline one, compiled (for the
// baseline, as libraries build it) with the runtime's permission request, over variants that
// say which they are: the AMX variant is chosen exactly where this process may use the tiles (on
// a CPU without AMX, never), also when ANSOR_KERNEL_TARGET asks for it.
TEST(LibraryDispatchTest, AnAmxVariantRunsOnlyWhereTheProcessMayUseTheTiles) {
#if defined(__x86_64__) && defined(__linux__)
  Program p = test::parse("kernel add1 {\n  X = input i32[3]\n  Y[i:3] = X[i] + 1\n}\n");
  const std::vector<LibraryVariant> variants = {{"sapphirerapids", "lib__sapphirerapids", {"avx2", "amx-bf16", "amx-int8", "amx-tile"}},
                                                {"x86-64", "lib__x86_64", {}}};
  const std::filesystem::path dir = test::test_temp_dir("ansor_amx_dispatch");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "lib.h") << library_header(p, "lib");
  for (const LibraryVariant& v : variants) std::ofstream(dir / (v.lib + ".h")) << library_header(p, v.lib);
  std::ofstream(dir / "lib_dispatch.cpp") << library_dispatcher(p, "lib", variants);
  std::ofstream(dir / "main.cpp") << "#include <cstdio>\n"
                                     "#include \"lib.h\"\n#include \"lib__sapphirerapids.h\"\n#include \"lib__x86_64.h\"\n"
                                     "extern \"C\" {\n"
                                     "int lib__sapphirerapids_add1(const int32_t*, int32_t*) { return 10; }\n"
                                     "int lib__x86_64_add1(const int32_t*, int32_t*) { return 20; }\n"
                                     "const ansor_kernel_info* lib__sapphirerapids_kernels(int* count) { *count = 0; return nullptr; }\n"
                                     "const ansor_kernel_info* lib__x86_64_kernels(int* count) { *count = 0; return nullptr; }\n"
                                     "}\n"
                                     "int main() { std::printf(\"%s %d\\n\", lib_target(), lib_add1(nullptr, nullptr)); }\n";
  const KernelCompiler compiler = make_kernel_compiler();
  const std::string runtime = std::string(ANSOR_SOURCE_DIR) + "/runtime";
  const std::string program = (dir / "dispatch").string();
  const std::string compile = shell_quote(compiler.path) + " -std=c++17 -O1 -march=x86-64 -I" + shell_quote(dir.string()) + " -I" +
                              shell_quote(runtime + "/include") + " " + shell_quote((dir / "lib_dispatch.cpp").string()) + " " +
                              shell_quote((dir / "main.cpp").string()) + " " + shell_quote(runtime + "/src/amx_permission.cpp") + " -o " +
                              shell_quote(program) + " 2>&1";
  const std::string compiler_output = run_command_output(compile);
  ASSERT_TRUE(std::filesystem::exists(program)) << compile << "\n" << compiler_output;

  const std::string chosen = amx_usable_here() ? "sapphirerapids 10\n" : "x86-64 20\n";
  EXPECT_EQ(run_command_output("env -u ANSOR_KERNEL_TARGET " + shell_quote(program) + " 2>&1"), chosen);
  const std::string forced = run_command_output("ANSOR_KERNEL_TARGET=sapphirerapids " + shell_quote(program) + " 2>&1");
  if (amx_usable_here())
    EXPECT_EQ(forced, chosen);
  else
    EXPECT_EQ(forced, "lib: ANSOR_KERNEL_TARGET=sapphirerapids: this CPU cannot run it; choosing by its features\n" + chosen);
  std::filesystem::remove_all(dir);
#else
  GTEST_SKIP() << "AMX exists on x86-64 only, and only Linux grants it";
#endif
}

}  // namespace
}  // namespace ansor
