// The row padding of GPU shared buffers, against bank conflicts.
//
// Shared memory is 32 banks of 4-byte words. A warp's access is served in one pass when its
// lanes touch at most one word of each bank (lanes on the same word share it); lanes on different
// words of one bank are served in turn. Tiles copied into shared memory are often read down
// their columns: the rows of a thread's register tile, the rows of a tensor-core fragment. With
// rows a multiple of 128 bytes long, a column lies in one bank. A few elements of padding at the
// end of each row spread a column over the banks.
//
// The padding is a decision of lowering for the target, not of the schedule: a buffer that the
// schedule aligns itself (storage_align) keeps its layout. For each other shared buffer the
// accesses of the first warp of a block are evaluated lane by lane (loads and stores at their
// loops' first iteration; the fragment loads of tensor-core calls as the runtime makes them),
// and the padding is the smallest that minimises their passes, weighted by how often a block
// makes each. The padding keeps every vector access and every contiguous run a thread moves
// along a row (up to 16 bytes) aligned, and no launch beyond the target's shared memory.
#pragma once

#include <string>

#include "lower/lowered_kernel.h"
#include "target/target.h"

namespace ansor {

// Pads the rows (the second-to-last dimension's stride) of the shared buffers of a kernel
// lowered for a GPU, its launches and tensor calls found. Returns whether a buffer changed, after
// which the decisions that depend on the layout are to be taken again.
bool pad_shared_buffers(LoweredKernel& kernel, const GpuLimits& limits);

// The passes a block's first warp makes through the banks for its accesses to shared `buffer`
// in its layout as it is, each access weighted by how many times a block runs it.
int64_t shared_bank_passes(const LoweredKernel& kernel, const std::string& buffer);

}  // namespace ansor
