// Synchronisation of GPU thread blocks: barriers where threads communicate through shared memory.
//
// A block is the body of an outermost loop bound to a block index (or, without one, an outermost
// loop bound to a thread index: a grid of one block). Inside it the threads run every statement
// outside their own thread-bound loops redundantly, so a shared buffer written there is written
// by one thread only. A barrier goes between a statement that writes a shared buffer and a later
// one of the same sequence that reads it (or overwrites what it read), and at the start of the
// body of a loop whose next iteration would overwrite what the previous one still reads.
#pragma once

#include "lower/lowered_kernel.h"

namespace ansor {

// The threads of a block along x, y and z: the largest extent bound to each thread index in s.
ThreadDims block_thread_dims(const Stmt& s);

// The kernel with the barriers of every block inserted. Throws InvalidState where a barrier would be
// needed where only some threads of a block reach it (inside a thread-dependent condition or a
// thread-bound loop narrower than the block), or where a thread-bound loop nested in a loop bound
// to the same index is wider than it (its other iterations would never run).
LoweredKernel insert_gpu_barriers(LoweredKernel kernel);

}  // namespace ansor
