// Random valid schedules drawn from every transform step: the fuzzer of the lowering. Tests
// lower thousands of them and compare with the naive program; `ansor-gen emit --schedule random`
// builds libraries from them.
#pragma once

#include <cstdint>
#include <memory>

#include "schedule/state.h"

namespace ansor {

struct RandomScheduleOptions {
  int steps = 16;              // steps to apply (attempts that do not apply are not counted)
  bool gpu_bindings = false;   // also bind loops to GPU blocks and threads
};

// Deterministic for a seed. Throws InvalidState if a sequence of valid steps does not lower,
// which is a bug.
State random_schedule(const std::shared_ptr<const ComputeDAG>& dag, uint64_t seed, const RandomScheduleOptions& options = {});

}  // namespace ansor
