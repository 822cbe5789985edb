// Proving that an access stays inside its tensor, for the "index can go out of bounds" error.
//
// Index variables range over their extents; a `select` narrows them in each branch. A branch
// condition that is a conjunction of comparisons between integer expressions becomes a set of
// constraints `lower <= expr <= upper`. The range of an index is the box range of its
// variables tightened by each constraint: if expr >= c, then index = expr + (index - expr) >=
// c + min(index - expr).
#pragma once

#include <vector>

#include "ir/arith.h"

namespace ansor {

struct IndexConstraint {
  Expr expr;
  int64_t lower = INT64_MIN;
  int64_t upper = INT64_MAX;
};

// Adds the constraints that hold where `cond` evaluates to `truth`; parts it does not
// understand add nothing (the result stays conservative).
void add_constraints(const Expr& cond, bool truth, std::vector<IndexConstraint>& out);

// A range containing every value of the integer expression e under ranges and constraints.
Interval constrained_bound(const Expr& e, const RangeMap& ranges, const std::vector<IndexConstraint>& constraints);

}  // namespace ansor
