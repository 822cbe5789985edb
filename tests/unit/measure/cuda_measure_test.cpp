// Measuring CUDA candidates: nvcc builds them against the shared CUDA runtime, the worker runs
// them on the GPU (their arguments in device memory) and checks them against the naive program
// run on the CPU. On a machine with the GPU of the target the records hold times; without one
// each record says the device cannot be used, and nothing crashes. Skipped without nvcc.
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/cpp_generator.h"
#include "codegen/cuda_generator.h"
#include "measure/cuda_device.h"
#include "measure/measurer.h"
#include "sampler/default_schedule.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

TEST(CudaMeasureTest, CandidatesRunOnTheGpuOrSayWhyTheyCannot) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc on this machine: CUDA candidates are not built";
  const fs::path dir = test::test_temp_dir("ansor_cuda_measure_test");
  fs::remove_all(dir);
  Program program = test::parse("kernel mm { A = input f32[64, 32]\n B = input f32[32, 48]\n C = matmul(A, B) }");
  auto dag = test::dag_of(program, "mm");
  std::string why;
  std::optional<CudaDevice> device = probe_cuda_device(nvcc, why);
  Target target = device ? device->target : parse_target("cuda:sm_80");

  MeasureOptions options;
  options.min_seconds = 0.01;
  options.worker_path = ANSOR_TEST_WORKER;
  options.lock_dir = dir.string();
  options.build.runtime_include = default_runtime_include();
  options.build.work_dir = (dir / "work").string();
  const CudaGenerator cuda;
  const CppGenerator cpp;
  options.reference_generator = &cpp;
  Measurer measurer(make_kernel_compiler(nvcc, cuda_kernel_flags(target)), target, cuda, options);
  std::vector<Record> records = measurer.measure({{"mm", default_schedule(dag, SamplerContext::for_gpu(target))}});
  ASSERT_EQ(records.size(), 1u);
  const Record& r = records[0];
  EXPECT_EQ(r.target, target.to_string());
  EXPECT_NE(r.compiler.find("nvcc"), std::string::npos) << r.compiler;
  if (device) {
    EXPECT_EQ(r.error, MeasureError::None) << r.error_message;
    EXPECT_GT(r.seconds, 0);
  } else {
    // Built with nvcc, loaded by the worker, which found the candidate's CUDA runtime and was
    // told by it that there is no device.
    EXPECT_EQ(r.error, MeasureError::RunError);
    EXPECT_NE(r.error_message.find("the CUDA device cannot be used: "), std::string::npos) << r.error_message;
    std::printf("without a GPU: %s\n", r.error_message.c_str());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ansor
