// Interval bounds, linear forms and the index simplifier.
#include "ir/arith.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace ansor {

namespace {

// Interval ends are combined in 128 bits so that products and sums of int64 ends cannot wrap.
__extension__ typedef __int128 Wide;

constexpr int64_t kNegInf = INT64_MIN;
constexpr int64_t kPosInf = INT64_MAX;

int64_t saturate(Wide v) {
  if (v <= static_cast<Wide>(kNegInf)) return kNegInf;
  if (v >= static_cast<Wide>(kPosInf)) return kPosInf;
  return static_cast<int64_t>(v);
}

// Arithmetic on interval ends, where the int64 limits are infinities.
Wide widen(int64_t v) {
  if (v == kNegInf) return static_cast<Wide>(kNegInf) * 4;
  if (v == kPosInf) return static_cast<Wide>(kPosInf) * 4;
  return v;
}

Interval make(Wide lo, Wide hi) { return {saturate(lo), saturate(hi)}; }

int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

Interval mul_interval(Interval a, Interval b) {
  if (!a.bounded() || !b.bounded()) {
    if (a.is_point() && a.min == 0) return Interval::point(0);
    if (b.is_point() && b.min == 0) return Interval::point(0);
    return {};
  }
  Wide c[] = {widen(a.min) * widen(b.min), widen(a.min) * widen(b.max), widen(a.max) * widen(b.min),
                  widen(a.max) * widen(b.max)};
  return make(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

Interval bound_binary(const BinaryNode& n, const RangeMap& ranges) {
  if (is_comparison(n.op) || is_logical(n.op)) return {0, 1};
  Interval a = bound_of(n.a, ranges), b = bound_of(n.b, ranges);
  switch (n.op) {
    case BinaryOp::Add: return make(widen(a.min) + widen(b.min), widen(a.max) + widen(b.max));
    case BinaryOp::Sub: return make(widen(a.min) - widen(b.max), widen(a.max) - widen(b.min));
    case BinaryOp::Mul: return mul_interval(a, b);
    case BinaryOp::Div:
      if (b.is_point() && b.min > 0) {
        int64_t c = b.min;
        return {a.min == kNegInf ? kNegInf : floordiv_i(a.min, c), a.max == kPosInf ? kPosInf : floordiv_i(a.max, c)};
      }
      return {};
    case BinaryOp::Mod:
      if (b.is_point() && b.min > 0) {
        int64_t c = b.min;
        // Within one period the modulo is the value shifted down.
        if (a.bounded() && floordiv_i(a.min, c) == floordiv_i(a.max, c)) {
          Wide shift = static_cast<Wide>(floordiv_i(a.min, c)) * c;
          return make(a.min - shift, a.max - shift);
        }
        return {0, c - 1};
      }
      if (b.bounded() && b.min > 0) return {0, b.max - 1};
      return {};
    case BinaryOp::Min: return {std::min(a.min, b.min), std::min(a.max, b.max)};
    case BinaryOp::Max: return {std::max(a.min, b.min), std::max(a.max, b.max)};
    default: return {};
  }
}

}  // namespace

Interval bound_of(const Expr& e, const RangeMap& ranges) {
  switch (e->kind) {
    case ExprKind::IntImm: return Interval::point(e->as<IntImmNode>()->value);
    case ExprKind::Var: {
      auto it = ranges.find(e->as<VarNode>());
      return it == ranges.end() ? Interval{} : it->second;
    }
    case ExprKind::Binary: return bound_binary(*e->as<BinaryNode>(), ranges);
    case ExprKind::Unary: {
      auto* u = e->as<UnaryNode>();
      if (u->op == UnaryOp::Not) return {0, 1};
      Interval a = bound_of(u->operand, ranges);
      return make(-widen(a.max), -widen(a.min));
    }
    case ExprKind::Select: {
      auto* s = e->as<SelectNode>();
      Interval t = bound_of(s->true_value, ranges), f = bound_of(s->false_value, ranges);
      return {std::min(t.min, f.min), std::max(t.max, f.max)};
    }
    case ExprKind::Cast: {
      auto* c = e->as<CastNode>();
      if (dtype_is_float(c->value->dtype)) return {};
      return bound_of(c->value, ranges);
    }
    default: return e->dtype == DType::Bool ? Interval{0, 1} : Interval{};
  }
}

int64_t LinearForm::coef_of(const VarNode* var) const {
  for (auto& t : terms)
    if (t.atom.get() == var) return t.coef;
  return 0;
}

namespace {

// Coefficients and the constant never wrap: a sum or product that int64 cannot hold keeps its
// sub-expression as an atom (or a term) of its own instead.
void add_term(LinearForm& f, const Expr& atom, int64_t coef) {
  if (coef == 0) return;
  for (auto& t : f.terms) {
    int64_t sum = 0;
    if (structural_equal(t.atom, atom) && !__builtin_add_overflow(t.coef, coef, &sum)) {
      t.coef = sum;
      return;
    }
  }
  f.terms.push_back({atom, coef});
}

void accumulate(LinearForm& f, const Expr& e, int64_t scale) {
  int64_t scaled = 0;
  if (const int64_t* c = as_const_int(e)) {
    int64_t sum = 0;
    if (__builtin_mul_overflow(scale, *c, &scaled) || __builtin_add_overflow(f.constant, scaled, &sum)) return add_term(f, e, scale);
    f.constant = sum;
    return;
  }
  if (auto* b = e->as<BinaryNode>()) {
    switch (b->op) {
      case BinaryOp::Add:
        accumulate(f, b->a, scale);
        accumulate(f, b->b, scale);
        return;
      case BinaryOp::Sub:
        if (scale == INT64_MIN) break;
        accumulate(f, b->a, scale);
        accumulate(f, b->b, -scale);
        return;
      case BinaryOp::Mul:
        if (const int64_t* c = as_const_int(b->b); c && !__builtin_mul_overflow(scale, *c, &scaled))
          return accumulate(f, b->a, scaled);
        if (const int64_t* c = as_const_int(b->a); c && !__builtin_mul_overflow(scale, *c, &scaled))
          return accumulate(f, b->b, scaled);
        break;
      default: break;
    }
  }
  if (auto* u = e->as<UnaryNode>(); u && u->op == UnaryOp::Neg && scale != INT64_MIN) return accumulate(f, u->operand, -scale);
  add_term(f, e, scale);
}

}  // namespace

LinearForm linearize(const Expr& e) {
  LinearForm f;
  accumulate(f, e, 1);
  f.terms.erase(std::remove_if(f.terms.begin(), f.terms.end(), [](auto& t) { return t.coef == 0; }), f.terms.end());
  return f;
}

std::optional<int64_t> linear_coefficient(const Expr& e, const VarNode* var) {
  int64_t coef = 0;
  for (const LinearForm::Term& t : linearize(e).terms) {
    if (t.atom.get() == var) {
      coef = t.coef;
    } else if (uses_var(t.atom, var)) {
      return std::nullopt;
    }
  }
  return coef;
}

Expr from_linear(const LinearForm& f, DType t) {
  Expr sum;
  // Positive terms first so that the result reads a*x + b*y - c*z rather than -c*z + ...
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& term : f.terms) {
      if ((term.coef > 0) != (pass == 0)) continue;
      if (!sum) {
        sum = mul(term.atom, int_imm(term.coef, t));
      } else if (term.coef > 0 || term.coef == INT64_MIN) {
        sum = add(sum, mul(term.atom, int_imm(term.coef, t)));
      } else {
        sum = sub(sum, mul(term.atom, int_imm(-term.coef, t)));
      }
    }
  }
  if (!sum) return int_imm(f.constant, t);
  return add(sum, int_imm(f.constant, t));
}

namespace {

// For b > 0.
int64_t floormod_i(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

class Simplifier {
 public:
  Simplifier(const RangeMap& ranges, SimplifyRules rules) : ranges_(ranges), rules_(rules) {}

  Expr run(const Expr& e) {
    return rewrite_post_order(e, [&](const Expr& n) -> Expr { return simplify_node(n); });
  }

 private:
  Expr simplify_node(const Expr& n) {
    // A loop of one iteration: its variable is a constant.
    if (auto* v = n->as<VarNode>()) {
      auto it = ranges_.find(v);
      if (it != ranges_.end() && it->second.is_point()) return int_imm(it->second.min, n->dtype);
      return nullptr;
    }
    if (auto* b = n->as<BinaryNode>()) {
      if (dtype_is_int(b->a->dtype)) return simplify_int_binary(*b, n);
      return nullptr;
    }
    if (auto* u = n->as<UnaryNode>(); u && u->op == UnaryOp::Neg && dtype_is_int(n->dtype))
      return canonical_linear(n);
    return nullptr;
  }

  Expr canonical_linear(const Expr& n) {
    Expr rebuilt = from_linear(linearize(n), n->dtype);
    return structural_equal(rebuilt, n) ? nullptr : rebuilt;
  }

  Expr simplify_int_binary(const BinaryNode& b, const Expr& n) {
    switch (b.op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul: return canonical_linear(n);
      case BinaryOp::Div:
      case BinaryOp::Mod:
        if (const int64_t* c = as_const_int(b.b); c && *c > 0) return div_mod(b, n, *c);
        return nullptr;
      case BinaryOp::Min:
      case BinaryOp::Max: {
        Interval x = bound_of(b.a, ranges_), y = bound_of(b.b, ranges_);
        bool a_le_b = x.max <= y.min, b_le_a = y.max <= x.min;
        if (b.op == BinaryOp::Min) {
          if (a_le_b) return b.a;
          if (b_le_a) return b.b;
        } else {
          if (a_le_b) return b.b;
          if (b_le_a) return b.a;
        }
        return nullptr;
      }
      default:
        if (is_comparison(b.op)) return decide_comparison(b);
        return nullptr;
    }
  }

  // floordiv(x, c) and floormod(x, c): x = c*Q + R with R's coefficients in [0, c), so
  // floordiv(x, c) = Q + floordiv(R, c) and floormod(x, c) = floormod(R, c); R's range often
  // decides the rest.
  Expr div_mod(const BinaryNode& b, const Expr& n, int64_t c) {
    DType t = b.a->dtype;
    // floordiv(floordiv(x, a), c) = floordiv(x, a*c) for positive a, c.
    if (auto* inner = b.a->as<BinaryNode>(); inner && inner->op == BinaryOp::Div && b.op == BinaryOp::Div) {
      int64_t ac = 0;
      if (const int64_t* a = as_const_int(inner->b); a && *a > 0 && !__builtin_mul_overflow(*a, c, &ac))
        return run(div(inner->a, int_imm(ac, t)));
    }
    // floormod(floormod(x, a), c) = floormod(x, c) when c divides a.
    if (auto* inner = b.a->as<BinaryNode>(); inner && inner->op == BinaryOp::Mod && b.op == BinaryOp::Mod) {
      if (const int64_t* a = as_const_int(inner->b); a && *a > 0 && *a % c == 0) return run(mod(inner->a, b.b));
    }
    LinearForm x = linearize(b.a);
    LinearForm q, r;
    for (auto& term : x.terms) {
      int64_t qc = floordiv_i(term.coef, c), rc = floormod_i(term.coef, c);
      if (qc) q.terms.push_back({term.atom, qc});
      if (rc) r.terms.push_back({term.atom, rc});
    }
    q.constant = floordiv_i(x.constant, c);
    r.constant = floormod_i(x.constant, c);
    Expr rest = from_linear(r, t);
    Interval rb = bound_of(rest, ranges_);
    int64_t k = rb.bounded() ? floordiv_i(rb.min, c) : 0, kc = 0;
    if (rb.bounded() && k == floordiv_i(rb.max, c) && !__builtin_mul_overflow(k, c, &kc)) {
      if (b.op == BinaryOp::Div) {
        q.constant += k;
        return from_linear(q, t);
      }
      return sub(rest, int_imm(kc, t));
    }
    if (rules_ == SimplifyRules::All)
      if (Expr split = div_mod_of_multiples(b.op, q, r, c, t)) return split;
    Expr result = b.op == BinaryOp::Div ? add(from_linear(q, t), div(rest, int_imm(c, t))) : mod(rest, int_imm(c, t));
    return structural_equal(result, n) ? nullptr : result;
  }

  // R = d*A + B with d dividing c and B in [0, d) (a fused index x*d + lane, say): then
  // floordiv(R, c) = floordiv(A, c/d) and floormod(R, c) = floormod(A, c/d)*d + B. The largest
  // such d among the divisors that R's coefficients share with c; null where none is.
  Expr div_mod_of_multiples(BinaryOp op, const LinearForm& q, const LinearForm& r, int64_t c, DType t) {
    std::set<int64_t> divisors;
    for (const LinearForm::Term& term : r.terms) divisors.insert(std::gcd(term.coef, c));
    for (auto d = divisors.rbegin(); d != divisors.rend(); ++d) {
      if (*d <= 1 || *d >= c) continue;
      LinearForm multiples, below;
      for (const LinearForm::Term& term : r.terms) {
        if (term.coef % *d == 0) {
          multiples.terms.push_back({term.atom, term.coef / *d});
        } else {
          below.terms.push_back(term);
        }
      }
      multiples.constant = floordiv_i(r.constant, *d);
      below.constant = floormod_i(r.constant, *d);
      const Expr rest = from_linear(below, t);
      const Interval bounds = bound_of(rest, ranges_);
      if (!bounds.bounded() || bounds.min < 0 || bounds.max >= *d) continue;
      const Expr a = from_linear(multiples, t), e = int_imm(c / *d, t);
      if (op == BinaryOp::Div) return run(add(from_linear(q, t), div(a, e)));
      return run(add(mul(mod(a, e), int_imm(*d, t)), rest));
    }
    return nullptr;
  }

  Expr decide_comparison(const BinaryNode& b) {
    Interval d = bound_of(run(sub(b.a, b.b)), ranges_);
    switch (b.op) {
      case BinaryOp::LT:
        if (d.max < 0) return bool_imm(true);
        if (d.min >= 0) return bool_imm(false);
        break;
      case BinaryOp::LE:
        if (d.max <= 0) return bool_imm(true);
        if (d.min > 0) return bool_imm(false);
        break;
      case BinaryOp::GT:
        if (d.min > 0) return bool_imm(true);
        if (d.max <= 0) return bool_imm(false);
        break;
      case BinaryOp::GE:
        if (d.min >= 0) return bool_imm(true);
        if (d.max < 0) return bool_imm(false);
        break;
      case BinaryOp::EQ:
        if (d.is_point()) return bool_imm(d.min == 0);
        if (d.min > 0 || d.max < 0) return bool_imm(false);
        break;
      case BinaryOp::NE:
        if (d.is_point()) return bool_imm(d.min != 0);
        if (d.min > 0 || d.max < 0) return bool_imm(true);
        break;
      default: break;
    }
    return nullptr;
  }

  const RangeMap& ranges_;
  const SimplifyRules rules_;
};

}  // namespace

Expr simplify(const Expr& e, const RangeMap& ranges, SimplifyRules rules) { return Simplifier(ranges, rules).run(e); }

bool can_prove(const Expr& cond, const RangeMap& ranges) { return is_const_int(simplify(cond, ranges), 1); }

void split_conjuncts(const Expr& c, std::vector<Expr>& out) {
  auto* b = c->as<BinaryNode>();
  if (b && b->op == BinaryOp::And) {
    split_conjuncts(b->a, out);
    split_conjuncts(b->b, out);
  } else {
    out.push_back(c);
  }
}

}  // namespace ansor
