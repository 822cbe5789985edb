// The measurer that tuning tests use: the host CPU's backend with the test build's worker, its
// lock and work files under a test's own directory.
#pragma once

#include <filesystem>
#include <memory>

#include "backend/backend_registry.h"
#include "measure/host_target.h"
#include "measure/measurer.h"

namespace ansor::test {

// `min_seconds` and `run_timeout_seconds` are the ones tests vary.
inline std::unique_ptr<Measurer> host_measurer(const std::filesystem::path& dir, double min_seconds, double run_timeout_seconds) {
  KernelCompiler compiler = make_kernel_compiler();
  MeasureOptions options;
  options.min_seconds = min_seconds;
  options.run_timeout_seconds = run_timeout_seconds;
  options.worker_path = ANSOR_TEST_WORKER;
  options.lock_dir = dir.string();
  options.build.runtime_include = default_runtime_include();
  options.build.work_dir = (dir / "work").string();
  return backend_for(Target::Kind::Cpu).make_measurer(compiler, detect_host(compiler), options);
}

}  // namespace ansor::test
