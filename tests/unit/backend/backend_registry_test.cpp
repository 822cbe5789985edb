// The registry of backends: one per kind of target, found by the kind and by the target as the
// CLI and CMake name it; each owns its code generator and (for now empty) intrinsic table.
#include "backend/backend_registry.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace ansor {
namespace {

TEST(BackendRegistryTest, EveryKindHasOneBackend) {
  std::set<Target::Kind> kinds;
  for (const Backend* b : backends()) EXPECT_TRUE(kinds.insert(b->kind()).second) << b->name();
  EXPECT_EQ(kinds, (std::set<Target::Kind>{Target::Kind::Cpu, Target::Kind::Cuda}));
  for (Target::Kind kind : kinds) EXPECT_EQ(backend_for(kind).kind(), kind);
}

TEST(BackendRegistryTest, TargetsAsTheBuildNamesThemFindTheirBackend) {
  for (const char* cpu : {"host", "x86-64-v3", "skylake-avx512", "cpu:x86_64:rocketlake:avx512:t2"})
    EXPECT_EQ(backend_named(cpu).kind(), Target::Kind::Cpu) << cpu;
  for (const char* gpu : {"cuda", "cuda:sm_80", "cuda:sm_90"}) EXPECT_EQ(backend_named(gpu).kind(), Target::Kind::Cuda) << gpu;
  EXPECT_THROW(backend_named("cuda:not_an_arch"), std::invalid_argument);
  EXPECT_THROW(backend_named("tpu:v4"), std::invalid_argument);
}

TEST(BackendRegistryTest, EachBackendOwnsTheGeneratorOfItsLanguage) {
  EXPECT_EQ(backend_for(Target::Kind::Cpu).code_generator().source_extension(), ".cpp");
  EXPECT_EQ(backend_for(Target::Kind::Cuda).code_generator().source_extension(), ".cu");
}

// The CPU's table holds AMX's tile rows and the dot-product rows (lower/tensor_intrinsic.h);
// CUDA's none yet. The sampler sees the rows a target offers, tile rows first.
TEST(BackendRegistryTest, IntrinsicTablesAreFoundByTargetAndOfferedToTheSampler) {
  EXPECT_EQ(backend_for(Target::Kind::Cuda).intrinsics().size(), 27u) << "tensor cores: f16, bf16 and TF32, 3 x 3 tile counts";
  EXPECT_EQ(backend_named("cuda:sm_80").intrinsics().data(), backend_for(Target::Kind::Cuda).intrinsics().data());
  const SamplerContext gpu = sampler_context_for(parse_target("cuda:sm_80"));
  ASSERT_EQ(gpu.tensor_intrinsics.size(), 27u);
  for (const TensorizeOption& o : gpu.tensor_intrinsics) {
    EXPECT_GT(o.warp_m_tiles * o.warp_n_tiles, 0) << "warp rows";
    EXPECT_EQ(o.depth, o.tf32 ? 8 : 16) << "k steps of m16n8k8 and m16n8k16";
  }
  EXPECT_TRUE(sampler_context_for(parse_target("cuda:sm_75")).tensor_intrinsics.empty()) << "no m16n8k16 before sm_80";
  EXPECT_EQ(backend_for(Target::Kind::Cpu).intrinsics().size(), 265u);
  const SamplerContext amx =
      sampler_context_for(parse_target("cpu:x86_64:sapphirerapids:avx512+amx-bf16+amx-int8+amx-tile+avx512bf16+avx512vnni:t2"));
  // 5 operand types x 4 tile counts x 13 row counts per tile, then 3 dot products.
  ASSERT_EQ(amx.tensor_intrinsics.size(), 263u);
  EXPECT_EQ(amx.tensor_intrinsics.front().rows, 32);
  EXPECT_EQ(amx.tensor_intrinsics.front().tile_rows, 16);
  EXPECT_EQ(amx.tensor_intrinsics.front().lanes, 32);
  EXPECT_EQ(amx.tensor_intrinsics.front().depth, 2);
  EXPECT_EQ(amx.tensor_intrinsics.back().rows, 0) << "a dot product";
  EXPECT_TRUE(sampler_context_for(parse_target("cpu:x86_64:rocketlake:avx512:t2")).tensor_intrinsics.empty());
  const SamplerContext ctx = sampler_context_for(parse_target("cpu:x86_64:znver4:avx512+avx512vnni:t2"));
  ASSERT_EQ(ctx.tensor_intrinsics.size(), 2u);
  for (const TensorizeOption& o : ctx.tensor_intrinsics) {
    EXPECT_EQ(o.out, DType::I32);
    EXPECT_EQ(o.lanes, 16);
    EXPECT_EQ(o.depth, 4);
  }
  const SamplerContext avx2 = sampler_context_for(parse_target("cpu:x86_64:alderlake:avx2+avxvnni:t2"));
  ASSERT_EQ(avx2.tensor_intrinsics.size(), 2u);
  EXPECT_EQ(avx2.tensor_intrinsics[0].lanes, 8) << "AVX-VNNI's ymm lanes";
}

TEST(BackendRegistryTest, SamplerSeesGpuLimitsOnlyOnAGpu) {
  const Target gpu = parse_target("cuda:sm_80");
  SamplerContext ctx = sampler_context_for(gpu);
  EXPECT_TRUE(ctx.gpu);
  EXPECT_EQ(ctx.parallelism, gpu.gpu.sm_count);
  EXPECT_EQ(ctx.gpu_limits.max_threads_per_block, gpu.gpu.max_threads_per_block);
  Target cpu;
  cpu.threads = 3;
  ctx = sampler_context_for(cpu);
  EXPECT_FALSE(ctx.gpu);
  EXPECT_EQ(ctx.parallelism, 3);
}

// The CMake text a build reads: the flags that key a variant's records and the command that
// compiles its sources come from the backend, the placeholders left for the CMake module.
TEST(BackendRegistryTest, CpuVariantCMakeNamesFlagsAndCompileCommand) {
  const std::string text = backend_for(Target::Kind::Cpu).cmake_variant({"x86-64-v3", "/usr/bin/clang++", {"-O2", "-march=native"}}, "lib__x86_64_v3", "/rt");
  EXPECT_NE(text.find("set(ANSOR_KERNEL_STEP_TARGET_lib__x86_64_v3 \"x86-64-v3\")"), std::string::npos) << text;
  EXPECT_NE(text.find("set(ANSOR_KERNEL_FLAGS_lib__x86_64_v3 \"-O2\" \"-march=x86-64-v3\")"), std::string::npos) << text;
  EXPECT_NE(text.find("set(ANSOR_KERNEL_COMPILE_lib__x86_64_v3 \"/usr/bin/clang++\" \"-O2\" \"-march=x86-64-v3\" \"-std=c++17\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"-I/rt\" \"-c\" \"<SOURCE>\" \"-o\" \"<OUTPUT>\")"), std::string::npos) << text;
}

TEST(BackendRegistryTest, CudaCMakeNamesTheArchitectureAndItsFlags) {
  const Backend& cuda = backend_for(Target::Kind::Cuda);
  const std::string variant = cuda.cmake_variant({"cuda:sm_90", "", {}}, "lib", "/rt");
  EXPECT_NE(variant.find("set(ANSOR_KERNEL_STEP_TARGET_lib \"cuda:sm_90\")"), std::string::npos) << variant;
  EXPECT_NE(variant.find("set(ANSOR_KERNEL_FLAGS_lib \"-O3\" \"-arch=sm_90\")"), std::string::npos) << variant;
  const std::string library = cuda.cmake_library({"cuda:sm_90", "", {"-lineinfo"}}, "/rt", false);
  EXPECT_NE(library.find("set(ANSOR_KERNEL_CUDA_ARCHITECTURE \"90\")"), std::string::npos) << library;
  EXPECT_NE(library.find("set(ANSOR_KERNEL_CUDA_OPTIONS \"-O3\" \"-lineinfo\")"), std::string::npos) << library;
  EXPECT_THROW(cuda.variant_features({"cuda:sm_90", "", {}}), std::invalid_argument);
}

}  // namespace
}  // namespace ansor
