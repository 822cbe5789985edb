// An interpreter for loop programs: runs a lowered kernel without compiling it.
//
// The property tests run thousands of random schedules through it (compiling each would take
// far too long), and GPU programs run on it block by block, thread by thread: loops bound to
// GPU indices run sequentially and barriers do nothing. Floating-point values are computed in
// double and rounded to the buffer's dtype when stored; integers wrap like the compiled code.
#pragma once

#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

// args holds one buffer per kernel parameter (inputs, then outputs), each with the parameter's
// number of elements (packed inputs in their packed shape). Throws std::runtime_error on an
// access outside a buffer, which a correct lowering never makes.
void interpret(const LoweredKernel& kernel, std::vector<std::vector<double>>& args);

// The packed form of a plain input: runs one of a kernel's packers.
std::vector<double> pack_input(const LoweredKernel& packer, const std::vector<double>& plain);

}  // namespace ansor
