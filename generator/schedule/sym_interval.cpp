// Symbolic interval arithmetic over index expressions.
#include "schedule/sym_interval.h"

#include <algorithm>

#include "ir/arith.h"

namespace ansor {

namespace {

SymInterval unknown() { return {nullptr, 0, true}; }

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace

SymInterval relax(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& relaxed) {
  switch (e->kind) {
    case ExprKind::IntImm: return {e, 0};
    case ExprKind::Var: {
      auto it = relaxed.find(e->as<VarNode>());
      if (it == relaxed.end()) return {e, 0};
      return {int_imm(0, e->dtype), it->second - 1};
    }
    case ExprKind::Cast: {
      auto* c = e->as<CastNode>();
      if (!dtype_is_int(c->value->dtype) || !dtype_is_int(e->dtype)) return unknown();
      SymInterval v = relax(c->value, relaxed);
      if (v.unknown) return v;
      return {cast(e->dtype, v.lo), v.span};
    }
    case ExprKind::Unary: {
      auto* u = e->as<UnaryNode>();
      if (u->op != UnaryOp::Neg) return unknown();
      SymInterval v = relax(u->operand, relaxed);
      if (v.unknown) return v;
      return {unary(UnaryOp::Neg, add(v.lo, int_imm(v.span, e->dtype))), v.span};
    }
    case ExprKind::Binary: break;
    default: return unknown();
  }
  auto* b = e->as<BinaryNode>();
  if (!dtype_is_int(e->dtype)) return unknown();
  SymInterval x = relax(b->a, relaxed);
  if (x.unknown) return x;
  SymInterval y = relax(b->b, relaxed);
  if (y.unknown) return y;
  DType t = e->dtype;
  const int64_t* c = as_const_int(b->b);
  switch (b->op) {
    case BinaryOp::Add: return {add(x.lo, y.lo), sat_add(x.span, y.span)};
    case BinaryOp::Sub: return {sub(x.lo, add(y.lo, int_imm(y.span, t))), sat_add(x.span, y.span)};
    case BinaryOp::Mul: {
      if (x.span == 0 && y.span == 0) return {mul(x.lo, y.lo), 0};
      const int64_t* ca = as_const_int(b->a);
      if (ca) std::swap(x, y);
      const int64_t* k = ca ? ca : c;
      if (!k) return unknown();
      if (*k >= 0) return {mul(x.lo, int_imm(*k, t)), sat_mul(x.span, *k)};
      return {mul(add(x.lo, int_imm(x.span, t)), int_imm(*k, t)), sat_mul(x.span, -*k)};
    }
    case BinaryOp::Div: {
      if (!c || *c <= 0) return unknown();
      // From a known start the quotients are exact (a fused thread loop's parts: 0..127 / 64 is
      // 0..1); from a symbolic one the range may start anywhere in a multiple of c.
      if (const int64_t* lo = as_const_int(x.lo); lo && *lo >= 0) return {int_imm(*lo / *c, t), (*lo + x.span) / *c - *lo / *c};
      return {div(x.lo, int_imm(*c, t)), (x.span + *c - 1) / *c};
    }
    case BinaryOp::Mod: {
      if (!c || *c <= 0) return unknown();
      if (x.span == 0) return {mod(x.lo, int_imm(*c, t)), 0};
      if (const int64_t* lo = as_const_int(x.lo); lo && *lo >= 0 && *lo / *c == (*lo + x.span) / *c) return {int_imm(*lo % *c, t), x.span};
      return {int_imm(0, t), *c - 1};
    }
    case BinaryOp::Min:
    case BinaryOp::Max:
      if (x.span == 0 && y.span == 0) return {binary(b->op, x.lo, y.lo), 0};
      return unknown();
    default: return unknown();
  }
}

SymInterval union_of(const SymInterval& a, const SymInterval& b) {
  if (a.unknown || b.unknown) return unknown();
  Expr diff = simplify(sub(b.lo, a.lo));
  const int64_t* d = as_const_int(diff);
  if (!d) return unknown();
  // b starts d after a.
  if (*d >= 0) return {a.lo, std::max(a.span, sat_add(*d, b.span))};
  return {b.lo, std::max(b.span, sat_add(-*d, a.span))};
}

}  // namespace ansor
