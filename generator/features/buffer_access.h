// The buffers one store touches and how: which elements its loops sweep at each loop level, the
// stride of each loop through them, the contiguous runs they form. The buffer access,
// arithmetic intensity and reuse features (features.h) are computed from these.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/arith.h"
#include "lower/lowered_kernel.h"

namespace ansor {

enum class AccessType : uint8_t { Read, Write, ReadWrite };

// The accesses of one store to one buffer.
struct BufferAccess {
  const Buffer* buffer = nullptr;
  int buffer_index = 0;  // into the kernel's buffers
  AccessType type = AccessType::Read;
  std::vector<std::vector<Expr>> indices;  // the distinct index tuples, in order of appearance
  std::vector<Expr> flat;                  // per tuple, the offset in elements
  std::vector<LinearForm> flat_forms;      // per tuple, the offset as a linear form

  int64_t element_bytes() const { return dtype_bytes(buffer->dtype); }
  // Whether the loop variable moves the offset of any tuple.
  bool uses(const VarNode* var) const;
};

// The buffers a store touches: the stored one first (Write, or ReadWrite when its value reads
// the element too), then the ones its value reads (Read), in order of first read. Throws
// std::invalid_argument naming a buffer the kernel does not have.
std::vector<BufferAccess> store_accesses(const LoweredKernel& kernel, const StoreNode& store);

// Per access, the elements touched when the loops from `level` inwards run over their extents
// and the loops outside stay at their first iteration: the hull of the access's tuples, no
// larger than the buffer in any dimension.
struct TouchedRegions {
  // elements[level][access] for level 0 (every loop runs) to loops.size() (one execution).
  std::vector<std::vector<double>> elements;
  // Per access, the extent of each dimension of the region at level 0.
  std::vector<std::vector<int64_t>> outermost;
};
TouchedRegions touched_regions(const std::vector<BufferAccess>& accesses, const std::vector<const ForNode*>& loops);

// The change of the access's offset (in elements) from one iteration of `loop` to the next, the
// least over its tuples: the coefficient where the offset is linear in the loop variable, else
// the average change over the loop's range (rounded up) with the other loops at 0. 0 when the
// loop does not move the access.
int64_t loop_stride(const BufferAccess& access, const ForNode& loop, const std::vector<const ForNode*>& loops);

// The elements of the longest contiguous run of a region of the buffer: the extent of the
// dimension of stride 1, times the next larger stride's while the dimensions inside it are whole
// and unpadded.
int64_t contiguous_elements(const Buffer& buffer, const std::vector<int64_t>& region);

}  // namespace ansor
