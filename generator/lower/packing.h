// The loop program that packs an input into the layout its consumer's loops read
// (layout_rewrite): for a const input the body of the library's pack function, for another the
// first statements of the kernel's body; and what tests interpret.
#pragma once

#include <string>
#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

// The name of a tensor's packed form: the pack kernel's second parameter, and the workspace an
// in-kernel pack fills (PackedLayout::buffer), which must agree.
inline std::string packed_buffer_name(const std::string& tensor) { return tensor + ".packed"; }

// A kernel with two parameters, the plain tensor and its packed form (packed_buffer_name).
// Packed elements whose source is out of bounds (loops of ragged splits overshoot) are 0. For a
// GPU program (`gpu`), the packed elements are spread over blocks of threads, one element each.
LoweredKernel lower_packing(const PackedLayout& layout, DType dtype, const std::vector<int64_t>& plain_shape, const std::string& name,
                            bool gpu = false);

}  // namespace ansor
