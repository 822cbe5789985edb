// Integer arithmetic analysis: constant bounds of expressions, linear forms, and a simplifier
// for index expressions.
//
// Bound inference, guard elimination, vectorisation (is this index stride-1 in the vector
// lane?) and the bounds checks of kernels.def all rest on these. Everything is exact or
// conservative: an Interval always contains every value the expression can take.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace ansor {

// A closed range of integers; the limits of int64 stand for "unbounded".
struct Interval {
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;

  static Interval point(int64_t v) { return {v, v}; }
  // [0, extent)
  static Interval range(int64_t extent) { return {0, extent - 1}; }
  bool bounded() const { return min != INT64_MIN && max != INT64_MAX; }
  bool is_point() const { return bounded() && min == max; }
  bool contains(const Interval& o) const { return min <= o.min && o.max <= max; }
};

// The ranges of variables an analysis may assume.
using RangeMap = std::unordered_map<const VarNode*, Interval>;

// A range containing every value of an integer or bool expression.
Interval bound_of(const Expr& e, const RangeMap& ranges);

// sum(coef * atom) + constant, where an atom is a variable or a sub-expression that is not
// linear (a division, a load); equal atoms are merged.
struct LinearForm {
  struct Term {
    Expr atom;
    int64_t coef;
  };
  std::vector<Term> terms;
  int64_t constant = 0;

  // The coefficient of an atom that is exactly `var`, 0 when it does not occur as a term.
  int64_t coef_of(const VarNode* var) const;
};

LinearForm linearize(const Expr& e);
// The coefficient of var in e when e is linear in var (var occurs in no other atom; 0 when it
// does not occur), else nullopt.
std::optional<int64_t> linear_coefficient(const Expr& e, const VarNode* var);
Expr from_linear(const LinearForm& f, DType t = kIndexType);

// The rules simplify applies. The bodies of a kernel's operations are simplified by the
// Canonical ones, fixed: records key a computation by the text of its bodies, so a new rule
// there would orphan every record of the kernels it rewrites. Loop programs take them All.
enum class SimplifyRules : uint8_t {
  Canonical,
  All,  // also: floordiv and floormod of d*A + B, B in [0, d), by a multiple of d
};

// Rewrites integer sub-expressions into a canonical, simpler form: linear combinations are
// collected, floor division and modulo by constants are resolved where the ranges allow,
// comparisons, min and max decided by bounds are folded. Float arithmetic is left untouched.
Expr simplify(const Expr& e, const RangeMap& ranges = {}, SimplifyRules rules = SimplifyRules::All);

// Appends the conjuncts of a condition to `out`: a && (b && c) gives a, b, c.
void split_conjuncts(const Expr& c, std::vector<Expr>& out);

// Whether cond is provably true for all values in ranges.
bool can_prove(const Expr& cond, const RangeMap& ranges);

}  // namespace ansor
