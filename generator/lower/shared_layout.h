// The layout of GPU shared buffers against bank conflicts: rows padded or rotated.
//
// Shared memory is 32 banks of 4-byte words. A warp's access is served in one pass when its
// lanes touch at most one word of each bank (lanes on the same word share it); lanes on different
// words of one bank are served in turn. Tiles copied into shared memory are often read down
// their columns: the rows of a thread's register tile, the rows of a tensor-core fragment. With
// rows a multiple of 128 bytes long, a column lies in one bank. A few elements of padding at the
// end of each row spread a column over the banks, unless the rows read together are a multiple
// of 128 bytes apart whatever the padding (rows 8 apart with 16-byte aligned rows: the A tiles
// of tensor cores). Rotating each row's 16-byte chunks by one place every few rows spreads those
// too (RowRotation, lowered_kernel.h), at the cost of index arithmetic on every access.
//
// The layout is a decision of lowering for the target, not of the schedule: a buffer that the
// schedule aligns itself (storage_align) keeps its layout. For each other shared buffer the
// accesses of the first warp of a block are evaluated lane by lane (loads and stores at their
// loops' first iteration; the fragment loads of tensor-core calls as the runtime makes them),
// and the layout is the one that minimises their passes, weighted by how often a block makes
// each: unpadded where nothing is fewer, else the smallest padding, else a rotation. Padding keeps
// every vector access and every contiguous run a thread moves along a row (up to 16 bytes)
// aligned, and no launch beyond the target's shared memory; rows are rotated only where they are
// a power of two of chunks (no divisions to find an element) and every access along them is an
// explicit vector of at most 16 bytes (the compiler cannot vectorize through the rotation's
// arithmetic).
#pragma once

#include <string>

#include "lower/lowered_kernel.h"
#include "target/target.h"

namespace ansor {

// Chooses the layout of the shared buffers of a kernel lowered for a GPU, its launches and
// tensor calls found. Returns whether a buffer changed, after which the decisions that depend on
// the layout are to be taken again.
bool choose_shared_layouts(LoweredKernel& kernel, const GpuLimits& limits);

// The passes a block's first warp makes through the banks for its accesses to shared `buffer`
// in its layout as it is, each access weighted by how many times a block runs it.
int64_t shared_bank_passes(const LoweredKernel& kernel, const std::string& buffer);

}  // namespace ansor
