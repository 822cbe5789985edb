// Sampler parameters from the target.
#include "sampler/sampler_context.h"

namespace ansor {

SamplerContext SamplerContext::for_target(const Target& target) {
  SamplerContext ctx;
  ctx.gpu = target.kind == Target::Kind::Cuda;
  ctx.parallelism = ctx.gpu ? 80 : target.threads;
  ctx.vector_lanes = target.vector_bits() / 32;
  return ctx;
}

}  // namespace ansor
