// Kernels of AMX's tile rows compile to AMX instructions: the C++ of a default program for a
// Sapphire Rapids target, compiled with -march=sapphirerapids by clang++ and g++ (each where it
// is installed), holds the tile configuration, tile loads and stores, the tile products and the
// release; no CPU is needed, only the compilers (the tests of tests/amx_emulation run the same
// wrappers on an emulation).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "codegen/cpp_generator.h"
#include "lang/program.h"
#include "lower/lower.h"
#include "measure/measurer.h"
#include "measure/process.h"
#include "sampler/default_schedule.h"
#include "sampler/sampler_context.h"
#include "support/file_util.h"
#include "target/target.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDef = R"(
kernel dense_bf16 {
  X = input bf16[128, 96]
  W = const bf16[64, 96]
  Y[i:128, j:64] = sum(k:96, f32(X[i, k]) * f32(W[j, k]))
}
kernel matmul_u8s8 {
  A = input u8[64, 128]
  B = const i8[128, 64]
  C[i:64, j:64] = sum(k:128, i32(A[i, k]) * i32(B[k, j]))
}
kernel conv_bf16 {
  X = input bf16[1, 8, 14, 64]
  W = const bf16[3, 3, 64, 32]
  P[n:1, h:10, w:16, c:64] = select(h >= 1 && h < 9 && w >= 1 && w < 15, X[n, h - 1, w - 1, c], 0.0)
  Y[n:1, h:8, w:14, o:32] = sum(rh:3, rw:3, c:64, f32(P[n, h + rh, w + rw, c]) * f32(W[rh, rw, c, o]))
}
)";

// The default program of `kernel` for an AMX target, as C++.
std::string amx_source(const std::string& kernel) {
  static const Program program = test::parse(kDef);
  const auto dag = test::dag_of(program, kernel);
  const Target amx = parse_target("cpu:x86_64:sapphirerapids:avx512+amx-bf16+amx-int8+amx-tile+avx512bf16+avx512vnni:t2");
  SamplerContext ctx = SamplerContext::for_cpu(amx);
  ctx.tensor_intrinsics = {{DType::BF16, DType::BF16, DType::F32, 32, 2, 32, 16},
                           {DType::U8, DType::I8, DType::I32, 32, 4, 32, 16},
                           {DType::BF16, DType::BF16, DType::F32, 32, 2, 14, 14}};
  LowerOptions options;
  options.target = amx;
  const CppGenerator cpp;
  return cpp.source_prelude() + cpp.kernel_definitions(lower_state(default_schedule(dag, ctx), kernel, options), *dag, kernel, kernel, "test");
}

// The assembly `compiler` makes of `source` for Sapphire Rapids; empty where the compiler is
// not installed.
std::string assembly(const std::string& compiler, const std::string& name, const std::string& source) {
  if (run_command_output("command -v " + compiler + " 2>/dev/null").empty()) return "";
  const fs::path dir = fs::temp_directory_path() / ("ansor_amx_codegen_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string cpp = (dir / (name + ".cpp")).string(), s = (dir / (name + ".s")).string();
  write_file_if_changed(cpp, source);
  const ProcessResult r =
      run_processes({{compiler, "-O2", "-march=sapphirerapids", "-std=c++17", "-S", "-I" + default_runtime_include(), "-o", s, cpp}}, 1, 120)[0];
  EXPECT_TRUE(r.ok()) << compiler << ": " << r.output;
  std::string text = read_file(s).value_or("");
  fs::remove_all(dir);
  return text;
}

TEST(AmxCodegenTest, TileRowsCompileToTileInstructionsWithClangAndGcc) {
  const std::string bf16 = amx_source("dense_bf16"), int8 = amx_source("matmul_u8s8"), conv = amx_source("conv_bf16");
  ASSERT_NE(bf16.find("ansor_rt::amx_dot_bf16_f32<"), std::string::npos) << bf16;
  ASSERT_NE(int8.find("ansor_rt::amx_dot_u8s8_i32<"), std::string::npos) << int8;
  // A convolution's rows of 14 pixels: tiles of 14 rows.
  ASSERT_NE(conv.find("ansor_rt::amx_dot_bf16_f32<1, 2, 14>("), std::string::npos) << conv;
  int compiled = 0;
  for (const char* compiler : {"clang++", "g++"}) {
    const std::string a = assembly(compiler, "dense_bf16", bf16), b = assembly(compiler, "matmul_u8s8", int8),
                      c = assembly(compiler, "conv_bf16", conv);
    if (a.empty() && b.empty() && c.empty()) continue;
    ++compiled;
    for (const std::string* text : {&a, &c})
      for (const char* instruction : {"ldtilecfg", "tileloadd", "tdpbf16ps", "tilestored", "tilerelease"})
        EXPECT_TRUE(std::regex_search(*text, std::regex(std::string("\\b") + instruction + "\\b"))) << compiler << ": no " << instruction;
    for (const char* instruction : {"ldtilecfg", "tileloadd", "tdpbusd", "tilestored", "tilerelease"})
      EXPECT_TRUE(std::regex_search(b, std::regex(std::string("\\b") + instruction + "\\b"))) << compiler << ": no " << instruction;
  }
  if (compiled == 0) GTEST_SKIP() << "neither clang++ nor g++ is installed";
}

}  // namespace
}  // namespace ansor
