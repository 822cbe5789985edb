// The buffer stores of a loop program with what surrounds each: its loops and the allocation of
// the buffer it stores into. The features of a store are computed from this.
#pragma once

#include <vector>

#include "lower/lowered_kernel.h"

namespace ansor {

struct StoreSite {
  const StoreNode* store = nullptr;
  std::vector<int> loops;  // indices into LoopProgram::loops, outermost first
  // How many of `loops` lie outside the Allocate of the stored buffer; -1 when no Allocate
  // encloses the store (kernel arguments, workspaces).
  int loops_outside_allocation = -1;
  // Whether a condition on the variables of the loops around it guards the store: a ragged
  // tile's guard, tested on every iteration of those loops.
  bool ragged_guard = false;
};

struct LoopProgram {
  std::vector<const ForNode*> loops;          // in program order
  std::vector<StoreSite> stores;              // in program order
  std::vector<std::vector<int>> loop_stores;  // per loop, the stores inside it
  bool has_thread_binding = false;
};

// The stores of `body` in program order (through both branches of conditions).
LoopProgram collect_stores(const Stmt& body);

}  // namespace ansor
