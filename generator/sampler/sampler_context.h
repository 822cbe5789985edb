// What the program sampler knows about the target: CPU or GPU, how much parallelism, vector
// width and the limits tile sizes must respect.
#pragma once

#include <vector>

#include "target/target.h"

namespace ansor {

struct SamplerContext {
  bool gpu = false;
  int parallelism = 2;                  // CPU threads, or GPU streaming multiprocessors
  int vector_lanes = 16;                // f32 lanes of the widest vector (CPU)
  int max_innermost_factor = 64;        // innermost tile sizes at most this
  std::vector<int> unroll_steps = {0, 16, 64, 512};  // auto_unroll_max_step choices
  // GPU
  int max_threads_per_block = 1024;
  int warp_size = 32;
  int max_vthreads = 8;

  static SamplerContext for_target(const Target& target);
};

}  // namespace ansor
