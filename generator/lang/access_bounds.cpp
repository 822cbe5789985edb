// Constraints from select conditions and the ranges of indices under them.
#include "lang/access_bounds.h"

#include <algorithm>

namespace ansor {

namespace {

BinaryOp negate(BinaryOp op) {
  switch (op) {
    case BinaryOp::LT: return BinaryOp::GE;
    case BinaryOp::LE: return BinaryOp::GT;
    case BinaryOp::GT: return BinaryOp::LE;
    case BinaryOp::GE: return BinaryOp::LT;
    case BinaryOp::EQ: return BinaryOp::NE;
    default: return BinaryOp::EQ;
  }
}

void add_comparison(BinaryOp op, const Expr& a, const Expr& b, std::vector<IndexConstraint>& out) {
  if (!dtype_is_int(a->dtype)) return;
  Expr d = simplify(sub(a, b));
  switch (op) {
    case BinaryOp::LT: out.push_back({d, INT64_MIN, -1}); break;
    case BinaryOp::LE: out.push_back({d, INT64_MIN, 0}); break;
    case BinaryOp::GT: out.push_back({d, 1, INT64_MAX}); break;
    case BinaryOp::GE: out.push_back({d, 0, INT64_MAX}); break;
    case BinaryOp::EQ: out.push_back({d, 0, 0}); break;
    default: break;
  }
}

}  // namespace

void add_constraints(const Expr& cond, bool truth, std::vector<IndexConstraint>& out) {
  if (auto* u = cond->as<UnaryNode>(); u && u->op == UnaryOp::Not) return add_constraints(u->operand, !truth, out);
  auto* b = cond->as<BinaryNode>();
  if (!b) return;
  // a && b true: both true; a || b false: both false.
  if ((b->op == BinaryOp::And && truth) || (b->op == BinaryOp::Or && !truth)) {
    add_constraints(b->a, truth, out);
    add_constraints(b->b, truth, out);
    return;
  }
  if (is_comparison(b->op) && b->op != BinaryOp::NE) {
    add_comparison(truth ? b->op : negate(b->op), b->a, b->b, out);
  } else if (b->op == BinaryOp::NE && !truth) {
    add_comparison(BinaryOp::EQ, b->a, b->b, out);
  }
}

Interval constrained_bound(const Expr& e, const RangeMap& ranges, const std::vector<IndexConstraint>& constraints) {
  if (auto* b = e->as<BinaryNode>(); b && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod)) {
    const int64_t* c = as_const_int(b->b);
    if (c && *c > 0) {
      Interval inner = constrained_bound(b->a, ranges, constraints);
      if (!inner.bounded()) return bound_of(e, ranges);
      // Floor division and modulo, in forms that cannot overflow.
      auto fdiv = [&](int64_t v) { return v / *c - (v % *c < 0 ? 1 : 0); };
      auto fmod = [&](int64_t v) { return v % *c < 0 ? v % *c + *c : v % *c; };
      if (b->op == BinaryOp::Div) return {fdiv(inner.min), fdiv(inner.max)};
      if (fdiv(inner.min) == fdiv(inner.max)) return {fmod(inner.min), fmod(inner.max)};
      return {0, *c - 1};
    }
  }
  Interval best = bound_of(e, ranges);
  for (const IndexConstraint& k : constraints) {
    Interval rest = bound_of(simplify(sub(e, k.expr)), ranges);
    // A limit that int64 cannot hold tightens nothing.
    int64_t limit = 0;
    if (k.lower != INT64_MIN && rest.min != INT64_MIN && !__builtin_add_overflow(k.lower, rest.min, &limit))
      best.min = std::max(best.min, limit);
    if (k.upper != INT64_MAX && rest.max != INT64_MAX && !__builtin_add_overflow(k.upper, rest.max, &limit))
      best.max = std::min(best.max, limit);
  }
  // The simplifier splits floordiv((i - 5), 2) into -3 + floordiv(i + 1, 2): bound the operands
  // of a sum separately too, so that the constraints reach a division below it.
  if (auto* b = e->as<BinaryNode>(); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)) {
    Interval x = constrained_bound(b->a, ranges, constraints), y = constrained_bound(b->b, ranges, constraints);
    if (x.bounded() && y.bounded()) {
      bool add = b->op == BinaryOp::Add;
      int64_t lo = 0, hi = 0;
      bool overflow = add ? __builtin_add_overflow(x.min, y.min, &lo) || __builtin_add_overflow(x.max, y.max, &hi)
                          : __builtin_sub_overflow(x.min, y.max, &lo) || __builtin_sub_overflow(x.max, y.min, &hi);
      if (!overflow) {
        best.min = std::max(best.min, lo);
        best.max = std::min(best.max, hi);
      }
    }
  }
  return best;
}

}  // namespace ansor
