// Vectorised loops really vectorise: the kernel compiler turns the emitted vector statements of
// a loop annotated `vectorize` into packed vector arithmetic (checked in its assembly), rather
// than leaving it to a hint the compiler may ignore. The compiler's own auto-vectoriser is
// turned off, so that only the generated vector code can produce packed instructions, and the
// same loop without the annotation is checked to produce none.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "codegen/cpp_generator.h"
#include "lower/lower.h"
#include "lang/program.h"
#include "measure/host_target.h"
#include "measure/measurer.h"
#include "measure/process.h"
#include "schedule/steps.h"
#include "support/file_util.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

std::string assembly_of(const State& state, const std::string& name) {
  KernelCompiler compiler = make_kernel_compiler();
  fs::path dir = fs::temp_directory_path() / ("ansor_vectorize_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string source = (dir / (name + ".cpp")).string(), assembly = (dir / (name + ".s")).string();
  const CppGenerator cpp;
  write_file_if_changed(source, cpp.source_prelude() + cpp.kernel_definitions(lower_state(state, name), state.dag(), name, name, "test"));
  std::vector<std::string> cmd = {compiler.path};
  cmd.insert(cmd.end(), compiler.flags.begin(), compiler.flags.end());
  bool clang = compiler.version.find("clang") != std::string::npos;
  for (const char* flag : clang ? std::vector<const char*>{"-fno-vectorize", "-fno-slp-vectorize"} : std::vector<const char*>{"-fno-tree-vectorize"})
    cmd.push_back(flag);
  cmd.insert(cmd.end(), {"-std=c++17", "-S", "-I" + default_runtime_include(), "-o", assembly, source});
  ProcessResult r = run_processes({cmd}, 1, 120)[0];
  EXPECT_TRUE(r.ok()) << r.output;
  std::string text = read_file(assembly).value_or("");
  fs::remove_all(dir);
  return text;
}

TEST(VectorizeTest, VectorisedInnerLoopUsesPackedVectorInstructions) {
  auto dag = test::dag_of(test::parse("kernel mm { A = input f32[64, 64]\n B = input f32[64, 64]\n C[i:64, j:64] = sum(k:64, A[i, k] * B[k, j]) }"), "mm");
  State plain(dag);
  plain.apply(std::make_shared<SplitStep>(2, 1, std::vector<int64_t>{16}));       // i, j.0, j.1, k
  plain.apply(std::make_shared<ReorderStep>(2, std::vector<int>{0, 1, 3, 2}));   // i, j.0, k, j.1
  State vectorized = plain;
  vectorized.apply(std::make_shared<AnnotateStep>(2, 3, IterAnnotation::Vectorize));
  Target host = detect_host(make_kernel_compiler());
  // Packed single-precision multiply-adds (or multiplies and adds) on vector registers.
  std::string registers = host.isa == "avx512" ? "zmm" : host.isa == "avx2" ? "[yz]mm" : "[xyz]mm";
  std::regex packed("\\b(v?fmadd\\w*ps|v?mulps|v?addps)\\b[^\\n]*%" + registers);
  std::string with = assembly_of(vectorized, "vectorized_mm"), without = assembly_of(plain, "scalar_mm");
  EXPECT_TRUE(std::regex_search(with, packed)) << "no packed " << registers << " arithmetic in:\n" << with.substr(0, 4000);
  EXPECT_FALSE(std::regex_search(without, packed)) << "the control kernel was vectorised by the compiler";
}

// The functions of an assembly listing, each from .cfi_startproc to .cfi_endproc.
std::vector<std::string> functions_of(const std::string& assembly) {
  std::vector<std::string> functions;
  for (size_t start = assembly.find(".cfi_startproc"); start != std::string::npos; start = assembly.find(".cfi_startproc", start + 1))
    functions.push_back(assembly.substr(start, assembly.find(".cfi_endproc", start) - start));
  return functions;
}

size_t count_matches(const std::string& text, const std::regex& pattern) {
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

// Math functions in a vectorised loop use the runtime's vector math (vector_math.h): packed
// arithmetic and no branch or call per element. Every function of the kernel holds at most one
// conditional branch (its loop's back edge, where the loop is not unrolled away) and calls
// nothing but the kernel's own loop nest (the entry points forward to ansor_kernel_impl).
TEST(VectorizeTest, VectorisedMathCallsBecomePackedArithmetic) {
  Target host = detect_host(make_kernel_compiler());
  std::string registers = host.isa == "avx512" ? "zmm" : host.isa == "avx2" ? "[yz]mm" : "[xyz]mm";
  std::regex packed("\\b(v?fmadd\\w*ps|v?mulps|v?addps)\\b[^\\n]*%" + registers);
  std::regex conditional_branch("\\n\\s+j(?!mp\\b)[a-z]+\\s");
  std::regex foreign_call("\\n\\s+call\\w*\\s+(?!\\w*ansor_kernel_impl)");
  for (const char* fn : {"gelu", "erf", "exp", "tanh", "sigmoid"}) {
    auto dag = test::dag_of(test::parse(fmt::format("kernel k {{ X = input f32[4096]\n Y[i:4096] = {}(X[i]) }}", fn)), "k");
    State state(dag);
    state.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{16}));  // i.0, i.1
    state.apply(std::make_shared<AnnotateStep>(1, 1, IterAnnotation::Vectorize));
    std::string text = assembly_of(state, std::string("vectorized_") + fn);
    EXPECT_TRUE(std::regex_search(text, packed)) << fn << ": no packed " << registers << " arithmetic in:\n" << text.substr(0, 4000);
    std::vector<std::string> functions = functions_of(text);
    EXPECT_FALSE(functions.empty()) << fn << ": no function in:\n" << text.substr(0, 4000);
    for (const std::string& function : functions) {
      EXPECT_LE(count_matches(function, conditional_branch), 1u) << fn << ": branches in:\n" << function.substr(0, 4000);
      EXPECT_EQ(count_matches(function, foreign_call), 0u) << fn << ": a call in:\n" << function.substr(0, 4000);
    }
  }
}

// The memory pragmas of an elementwise stage print as prefetches of its large input only (the
// bias vector stays cached by itself) and non-temporal stores into its output, fenced, and the
// compiler keeps both: prefetch instructions and streaming stores in the assembly. Without the
// pragmas there are neither.
TEST(VectorizeTest, MemoryPragmasBecomePrefetchesAndStreamingStores) {
  auto dag = test::dag_of(test::parse("kernel bg { X = input f32[64, 256]\n b = const f32[256]\n Y = gelu(bias_add(X, b, axis = 1)) }"), "bg");
  State plain(dag);
  const int y = plain.num_stages() - 1;
  plain.apply(std::make_shared<ComputeInlineStep>(y - 1));                              // the bias_add
  plain.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{16}));             // i, j.0, j.1
  plain.apply(std::make_shared<AnnotateStep>(y, 2, IterAnnotation::Vectorize));
  State hinted = plain;
  hinted.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::PrefetchBytes, 1024));
  hinted.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::StreamStores, 1));

  const CppGenerator cpp;
  LoweredKernel lowered = lower_state(hinted, "bg");
  const MemoryHints* hints = lowered.find_memory_hints("Y");
  ASSERT_NE(hints, nullptr);
  EXPECT_EQ(hints->prefetched, std::vector<std::string>{"X"});
  EXPECT_TRUE(hints->stream_stores);
  std::string source = cpp.kernel_definitions(lowered, hinted.dag(), "bg", "bg", "test");
  EXPECT_NE(source.find("ansor_rt::prefetch(&X["), std::string::npos) << source;
  EXPECT_NE(source.find(", 1024);"), std::string::npos) << source;
  EXPECT_EQ(source.find("ansor_rt::prefetch(&b["), std::string::npos) << source;
  EXPECT_NE(source.find("ansor_rt::vstore_stream<float, 16>(&Y["), std::string::npos) << source;
  EXPECT_NE(source.find("ansor_rt::store_fence();"), std::string::npos) << source;

  Target host = detect_host(make_kernel_compiler());
  if (host.arch != "x86_64") GTEST_SKIP() << "prefetch and streaming store instructions are checked on x86-64";
  std::regex prefetch("\\bprefetcht0\\b"), streaming("\\bv?movnt\\w*\\b"), fence("\\bsfence\\b");
  std::string with = assembly_of(hinted, "hinted_bias_gelu"), without = assembly_of(plain, "plain_bias_gelu");
  EXPECT_TRUE(std::regex_search(with, prefetch)) << with.substr(0, 4000);
  EXPECT_TRUE(std::regex_search(with, streaming)) << with.substr(0, 4000);
  EXPECT_TRUE(std::regex_search(with, fence)) << with.substr(0, 4000);
  EXPECT_FALSE(std::regex_search(without, prefetch) || std::regex_search(without, streaming));
}

// The prefetches of a vector load step by the target's cache line, which lowering passes on: a
// vector of 32 floats is two lines of 64 bytes, one of 128.
TEST(VectorizeTest, PrefetchesStepByTheTargetsCacheLine) {
  auto dag = test::dag_of(test::parse("kernel k { X = input f32[64, 256]\n Y[i:64, j:256] = X[i, j] * 2.0 }"), "k");
  State s(dag);
  const int y = s.num_stages() - 1;
  s.apply(std::make_shared<SplitStep>(y, 1, std::vector<int64_t>{32}));  // i, j.0, j.1
  s.apply(std::make_shared<AnnotateStep>(y, 2, IterAnnotation::Vectorize));
  s.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::PrefetchBytes, 1024));
  const CppGenerator cpp;
  for (int line : {64, 128}) {
    LowerOptions options;
    options.target.cache_line_bytes = line;
    const std::string source = cpp.kernel_definitions(lower_state(s, "k", options), s.dag(), "k", "k", "test");
    EXPECT_NE(source.find(", 1024);"), std::string::npos) << source;
    EXPECT_EQ(source.find(", 1088);") != std::string::npos, line == 64) << source;
    EXPECT_EQ(source.find(", 1152);"), std::string::npos) << source;
  }
}

// The memory pragmas are CPU hints: a GPU program carrying one does not lower.
TEST(VectorizeTest, MemoryPragmasAreRefusedInGpuPrograms) {
  auto dag = test::dag_of(test::parse("kernel bg { X = input f32[64, 256]\n b = const f32[256]\n Y = gelu(bias_add(X, b, axis = 1)) }"), "bg");
  State s(dag);
  const int y = s.num_stages() - 1;
  s.apply(std::make_shared<ComputeInlineStep>(y - 1));
  s.apply(std::make_shared<AnnotateStep>(y, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<AnnotateStep>(y, 1, IterAnnotation::ThreadX));
  State bound = s;
  EXPECT_NO_THROW(lower_state(bound, "bg"));
  s.apply(std::make_shared<PragmaStep>(y, 0, PragmaKind::PrefetchBytes, 1024));
  EXPECT_THROW(lower_state(s, "bg"), InvalidState);
}

}  // namespace
}  // namespace ansor
