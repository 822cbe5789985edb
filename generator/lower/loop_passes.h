// The passes that turn a loop program built from a State into the program that is compiled:
// every decision a code generator would otherwise take on its own (which loops are written out,
// which become vector statements, where local buffers live) is taken here, so that the printed
// loop program, the cost model's features and the emitted source describe one program.
#pragma once

#include <cstdint>

#include "lower/lowered_kernel.h"

namespace ansor {

// Unrolled loops are written out statement by statement while that makes at most this many
// statements; longer ones stay loops that the compiler is asked to unroll.
inline constexpr int64_t kMaxExpandedStatements = 1024;
// ... and while the written-out copies do at most this much work, counted in elements: each
// copy of a statement counts the lanes of the vector loops and the iterations of the unrolled
// loops around it. Few statements over wide vectors or long inner unrolled loops make a body
// that takes the kernel compiler seconds to optimise for no faster a kernel.
inline constexpr int64_t kMaxUnrolledElements = 2048;
// Local buffers up to this size live on the stack; larger ones come from the allocator.
inline constexpr int64_t kMaxStackBufferBytes = 128 * 1024;
// Vector statements are at most this many lanes wide (a power of two).
inline constexpr int64_t kMaxVectorLanes = 64;

// A loop that folds up to this many partial results of a local buffer into one accumulator is
// unrolled whatever the stage's unroll pragma: written out, its chain of dependent operations
// is what a code generator can combine as a tree (the vectorised rfactor's last step).
inline constexpr int64_t kMaxCombinedPartialResults = 256;

// Marks serial loops whose fully unrolled body has at most max_steps statements as unrolled,
// innermost first (the auto_unroll_max_step pragma).
Stmt apply_auto_unroll(const Stmt& s, int max_steps);

// A loop of one iteration (not a GPU binding) becomes its body with the variable at 0.
Stmt remove_unit_loops(const Stmt& s);

// Unrolled loops whose written-out form has at most max_statements statements and
// max_elements elements become a sequence of copies of their body, one per iteration; the
// others stay loops that the compiler is asked to unroll.
Stmt expand_unrolled_loops(const Stmt& s, int64_t max_statements = kMaxExpandedStatements, int64_t max_elements = kMaxUnrolledElements);

// Guards that the loops around them decide dropped (their statements kept or removed): the
// copies of an unrolled loop fix its variable, and a ragged reduction's guard inside them holds
// on every copy but the last, which unswitching leaves to this pass (it copies no unrolled loop).
Stmt decide_guards(const Stmt& s);

// A vectorized loop keeps that kind only where a code generator can write it as vector
// statements: 2 to kMaxVectorLanes lanes (a power of two), a body of stores (under conditions
// that do not depend on the loop) of which each lane stores its own element of a non-bool
// buffer. A loop whose lanes are a prefix of a power of two (an extent that is not one, or a
// body guarded by lane < n, n an index expression of the loops outside: a ragged tile's last
// vector) becomes a masked vector loop of that power of two with n active lanes (ForNode::
// active_lanes). Others become VectorizeHint loops.
Stmt legalize_vector_loops(const LoweredKernel& kernel, const Stmt& s);

// Guards of ragged tiles hoisted out of the tile: in the body of a serial or parallel loop, the
// guards inside it that compare a linear function of that loop's variable and of the loops
// inside the body (vector lanes included, not compiler-vectorized loops or GPU indices) with a
// bound are replaced by one test of whether they hold
// for the whole body, `if (all hold) { body without them } else { body }`. A split that does
// not divide its loop (a tile of 8 over 109 outputs) then runs its whole tiles unguarded and
// only the last one guarded. Bodies with barriers or reductions across threads are left alone.
Stmt unswitch_ragged_guards(const Stmt& s);

// Local buffers larger than max_stack_bytes move to the allocator (BufferScope::LocalHeap).
void place_local_buffers(LoweredKernel& kernel, int64_t max_stack_bytes = kMaxStackBufferBytes);

// All of the above (but auto-unrolling, which is per stage) on the kernel and its packers, in
// the order that makes each see the result of the one before: the loops combining local partial
// results unrolled first (kMaxCombinedPartialResults); the ragged tails of vector loops peeled
// (a serial loop around a vectorized loop guarded per lane runs unguarded vectors while the
// guard provably holds for every lane and keeps the guard for the remaining iterations only);
// for the program as compiled (expand_unrolled), ragged tiles unswitched, unrolled loops
// written out and the guards their copies decide dropped; the vector loops legalised last (the
// partial vectors left masked). When expand_unrolled is false (the features' view: one row per
// statement of the schedule), unrolled loops stay loops and guards stay where lowering put them.
void finish_loop_program(LoweredKernel& kernel, bool expand_unrolled = true);

}  // namespace ansor
