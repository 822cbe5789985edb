// A GPU's sampler context with the tensor cores' warp rows of its target, as the CUDA backend
// gives it, for the tests of layers below the backend (lower, codegen) that sample GPU programs.
#pragma once

#include "lower/tensor_intrinsic.h"
#include "sampler/sampler_context.h"

namespace ansor::test {

inline SamplerContext gpu_context_with_warp_rows(const Target& target) {
  SamplerContext ctx = SamplerContext::for_gpu(target);
  for (const TensorIntrinsic* row : tensor_intrinsics_for(target)) {
    TensorizeOption option{row->lhs.dtype, row->rhs.dtype, row->out.dtype};
    option.depth = row->extents[0];
    option.warp_m_tiles = row->warp_m_tiles;
    option.warp_n_tiles = row->warp_n_tiles;
    option.tf32 = row->tf32_operands;
    ctx.tensor_intrinsics.push_back(option);
  }
  return ctx;
}

}  // namespace ansor::test
