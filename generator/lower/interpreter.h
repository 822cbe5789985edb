// An interpreter for loop programs: runs a lowered kernel without compiling it.
//
// The property tests run thousands of random schedules through it (compiling each would take
// far too long). Floating-point values are computed in double and rounded to the buffer's dtype
// when stored; integers wrap like the compiled code.
//
// GPU programs run as on a GPU: blocks one after another, the threads of a block in lock step,
// statement by statement, with an active mask. A thread-bound loop does not iterate: each thread
// takes its own index (a loop nested in one of the same binding reads the same index; threads at
// or past its extent skip it), other loops iterate with every active thread, conditions split
// the mask. Local buffers are per thread, shared ones per block. Every thread of the block must
// reach each barrier and each reduction across threads (whose threads combine their values in
// index order, the first storing the result), and two threads accessing an element of a shared
// or global buffer between two barriers, one of them writing, is a race: these are errors. Code
// outside blocks runs as on a CPU.
#pragma once

#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

// args holds one buffer per kernel parameter (inputs, then outputs), each with the parameter's
// number of elements (packed inputs in their packed shape). Throws std::runtime_error on an
// access outside a buffer, a race or a barrier that only part of a block reaches, which a
// correct lowering never makes.
void interpret(const LoweredKernel& kernel, std::vector<std::vector<double>>& args);

// The packed form of a plain input: runs one of a kernel's packers.
std::vector<double> pack_input(const LoweredKernel& packer, const std::vector<double>& plain);

}  // namespace ansor
