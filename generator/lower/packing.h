// The loop program that packs a const input into the layout its consumer's loops read
// (layout_rewrite): the body of the library's pack function, and what tests interpret.
#pragma once

#include <string>
#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

// A kernel with two parameters, the plain tensor and its packed form. Packed elements whose
// source is out of bounds (loops of ragged splits overshoot) are 0. For a GPU program (`gpu`),
// the packed elements are spread over blocks of threads, one element each.
LoweredKernel lower_packing(const PackedLayout& layout, DType dtype, const std::vector<int64_t>& plain_shape, const std::string& name,
                            bool gpu = false);

}  // namespace ansor
