// Symbolic intervals for bound inference: the values an index takes while some loop variables
// (the "relaxed" ones, inside the attach point) run over their whole range and the others stay
// fixed. The result is [lo, lo + span] with lo an expression of the fixed variables and span a
// constant, which is what a buffer for one iteration of the fixed loops needs.
#pragma once

#include <unordered_map>

#include "ir/expr.h"

namespace ansor {

struct SymInterval {
  Expr lo;
  int64_t span = 0;
  bool unknown = false;  // not analysable: callers fall back to the whole dimension
};

// relaxed maps each relaxed variable to its extent (it ranges over [0, extent)).
SymInterval relax(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& relaxed);

// The smallest interval holding both, or unknown when their lower ends differ by a
// non-constant amount.
SymInterval union_of(const SymInterval& a, const SymInterval& b);

}  // namespace ansor
