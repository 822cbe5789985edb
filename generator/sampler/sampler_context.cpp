// Sampler parameters from the target.
#include "sampler/sampler_context.h"

#include <algorithm>

namespace ansor {

SamplerContext SamplerContext::for_cpu(const Target& target) {
  SamplerContext ctx;
  ctx.parallelism = target.threads;
  ctx.vector_lanes = target.vector_bits() / 32;
  return ctx;
}

SamplerContext SamplerContext::for_gpu(const Target& target) {
  SamplerContext ctx;
  ctx.gpu = true;
  ctx.parallelism = target.gpu.sm_count;
  ctx.vector_lanes = target.vector_bits() / 32;
  ctx.gpu_limits = target.gpu;
  return ctx;
}

std::vector<int64_t> reduction_thread_counts(int64_t extent, const SamplerContext& ctx) {
  // A count above the extent would leave threads without elements; below a warp, only the
  // largest power of two that fits is worth its shuffles.
  int64_t largest = 1;
  while (largest * 2 <= std::min<int64_t>(extent, ctx.gpu_limits.max_threads_per_block)) largest *= 2;
  std::vector<int64_t> counts;
  for (int64_t t = std::min<int64_t>(largest, ctx.gpu_limits.warp_size); t <= largest; t *= 2)
    if (ctx.gpu_limits.reduces_across(t)) counts.push_back(t);
  return counts;
}

}  // namespace ansor
