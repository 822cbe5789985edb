// GPU programs from the sampler launch: for every kernel of the kernel tests' file and 100
// seeds (20 under sanitizers), `--schedule random` on a CUDA target gives a program that lowers
// and passes the launch check (threads, shared memory, registers of local buffers, barriers), the
// kernels of f16 and bf16 products through tensor cores every time, and the CUDA sampler's own
// check is that of the lowered program.
#include <gtest/gtest.h>

#include <string>

#include "backend/backend_registry.h"
#include "lower/gpu_launch.h"
#include "lower/lower.h"
#include "measure/cuda_device.h"
#include "sampler/annotation.h"
#include "sampler/program_builder.h"
#include "test_support.h"

namespace ansor {
namespace {

TEST(GpuSampling, EveryRandomProgramOfEveryTestKernelLowersAndLaunches) {
  const Program program = load_program_file(std::string(ANSOR_SOURCE_DIR) + "/tests/kernels/kernels.def");
  const int seeds = test::kSanitizedBuild ? 10 : 100;
  for (const char* arch : {"cuda:sm_80", "cuda:sm_90"}) {
    const Target target = resolve_cuda_target(arch);
    const SamplerContext ctx = sampler_context_for(target);
    ASSERT_TRUE(ctx.launch_problem) << "the CUDA sampler checks the lowered program";
    LowerOptions options;
    options.target = target;
    int tensor_core_kernels = 0;
    for (const Kernel& k : program.kernels) {
      auto dag = std::make_shared<const ComputeDAG>(k.dag);
      int calls = 0;
      for (int seed = 0; seed < seeds; ++seed) {
        State state = random_program(dag, ctx, static_cast<uint64_t>(seed));
        LoweredKernel lowered = lower_state(state, k.name, options);
        EXPECT_NO_THROW(check_gpu_limits(lowered, target.gpu)) << arch << " " << k.name << " seed " << seed;
        calls += !lowered.tensor_calls.empty();
      }
      // A kernel that tensor cores compute (f16 and bf16 products on sm_80 and later) is computed
      // by them in every sampled program: its sketches are warp tiles, whose lanes lower to calls.
      EXPECT_TRUE(calls == 0 || calls == seeds) << arch << " " << k.name << ": " << calls << " of " << seeds << " programs call tensor cores";
      tensor_core_kernels += calls == seeds;
    }
    EXPECT_GE(tensor_core_kernels, 5) << arch;
  }
}

TEST(GpuSampling, TheEstimateDefersToTheLaunchCheck) {
  const Program program = test::parse("kernel k {\n  A = input f32[64, 64]\n  B = input f32[64, 64]\n  C = matmul(A, B)\n}\n");
  const Target target = resolve_cuda_target("cuda:sm_90");
  SamplerContext ctx = sampler_context_for(target);
  auto dag = test::dag_of(program, "k");
  const State state = random_program(dag, ctx, 7);
  EXPECT_TRUE(within_gpu_limits(state, ctx));
  ctx.launch_problem = [](const State&) { return std::string("refused"); };
  EXPECT_FALSE(within_gpu_limits(state, ctx));
  EXPECT_THROW(random_program(dag, ctx, 7), InvalidState) << "no draw passes: an error, never a program that does not launch";
}

}  // namespace
}  // namespace ansor
