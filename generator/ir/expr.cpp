// Expression nodes: builders with integer constant folding, queries and generic rewriting.
#include "ir/expr.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace ansor {

namespace {

struct BinaryOpInfo {
  std::string_view symbol;
  int category;  // 0 arithmetic, 1 comparison, 2 logical
  int precedence;
};
constexpr int Arith = 0, Compare = 1, Logic = 2;
constexpr BinaryOpInfo kBinaryOps[] = {
#define BINARY_OP(Enum, symbol, category, precedence) {symbol, category, precedence},
#include "ir/binary_op.def"
};

struct MathFnInfo {
  std::string_view name;
  int arity;
  bool accepts_int;
};
constexpr MathFnInfo kMathFns[] = {
#define MATH_FUNCTION(Enum, name, arity, accepts_int) {name, arity, accepts_int},
#include "ir/math_function.def"
};

constexpr std::string_view kReduceNames[] = {
#define REDUCE_OP(Enum, name) name,
#include "ir/reduce_op.def"
};

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 traps for INT64_MIN
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Folds an operation on two integer or bool literals; null when it cannot be folded safely
// (division by zero, or a result that int64 cannot hold).
Expr fold_ints(BinaryOp op, int64_t a, int64_t b, DType t) {
  int64_t r = 0;
  switch (op) {
    case BinaryOp::Add: return __builtin_add_overflow(a, b, &r) ? nullptr : int_imm(r, t);
    case BinaryOp::Sub: return __builtin_sub_overflow(a, b, &r) ? nullptr : int_imm(r, t);
    case BinaryOp::Mul: return __builtin_mul_overflow(a, b, &r) ? nullptr : int_imm(r, t);
    case BinaryOp::Div: return b == 0 || (a == INT64_MIN && b == -1) ? nullptr : int_imm(floor_div(a, b), t);
    case BinaryOp::Mod: return b == 0 ? nullptr : int_imm(floor_mod(a, b), t);
    case BinaryOp::Min: return int_imm(std::min(a, b), t);
    case BinaryOp::Max: return int_imm(std::max(a, b), t);
    case BinaryOp::EQ: return bool_imm(a == b);
    case BinaryOp::NE: return bool_imm(a != b);
    case BinaryOp::LT: return bool_imm(a < b);
    case BinaryOp::LE: return bool_imm(a <= b);
    case BinaryOp::GT: return bool_imm(a > b);
    case BinaryOp::GE: return bool_imm(a >= b);
    case BinaryOp::And: return bool_imm(a && b);
    case BinaryOp::Or: return bool_imm(a || b);
  }
  return nullptr;
}

// Integer identities and re-association of constants; null when nothing applies. Constants
// are only combined when the result fits in int64.
Expr simplify_int_binary(BinaryOp op, const Expr& a, const Expr& b) {
  const int64_t* ca = as_const_int(a);
  const int64_t* cb = as_const_int(b);
  int64_t r = 0;
  switch (op) {
    case BinaryOp::Add:
      if (ca && *ca == 0) return b;
      if (cb && *cb == 0) return a;
      if (ca) return add(b, a);  // constants go right
      if (cb) {
        if (auto* inner = a->as<BinaryNode>(); inner && inner->op == BinaryOp::Add)
          if (const int64_t* c = as_const_int(inner->b); c && !__builtin_add_overflow(*c, *cb, &r))
            return add(inner->a, int_imm(r, a->dtype));
      }
      return nullptr;
    case BinaryOp::Sub:
      if (cb && *cb != INT64_MIN) return add(a, int_imm(-*cb, a->dtype));
      if (structural_equal(a, b)) return int_imm(0, a->dtype);
      return nullptr;
    case BinaryOp::Mul:
      if ((ca && *ca == 0) || (cb && *cb == 0)) return int_imm(0, a->dtype);
      if (ca && *ca == 1) return b;
      if (cb && *cb == 1) return a;
      if (ca) return mul(b, a);
      if (cb) {
        if (auto* inner = a->as<BinaryNode>(); inner && inner->op == BinaryOp::Mul)
          if (const int64_t* c = as_const_int(inner->b); c && !__builtin_mul_overflow(*c, *cb, &r))
            return mul(inner->a, int_imm(r, a->dtype));
      }
      return nullptr;
    case BinaryOp::Div:
      if (cb && *cb == 1) return a;
      return nullptr;
    case BinaryOp::Mod:
      if (cb && *cb == 1) return int_imm(0, a->dtype);
      return nullptr;
    case BinaryOp::And:
      if (ca) return *ca ? b : bool_imm(false);
      if (cb) return *cb ? a : bool_imm(false);
      return nullptr;
    case BinaryOp::Or:
      if (ca) return *ca ? bool_imm(true) : b;
      if (cb) return *cb ? bool_imm(true) : a;
      return nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

std::string_view binary_op_symbol(BinaryOp op) { return kBinaryOps[static_cast<int>(op)].symbol; }
int binary_op_precedence(BinaryOp op) { return kBinaryOps[static_cast<int>(op)].precedence; }
bool is_comparison(BinaryOp op) { return kBinaryOps[static_cast<int>(op)].category == Compare; }
bool is_logical(BinaryOp op) { return kBinaryOps[static_cast<int>(op)].category == Logic; }
std::string_view math_fn_name(MathFn fn) { return kMathFns[static_cast<int>(fn)].name; }
int math_fn_arity(MathFn fn) { return kMathFns[static_cast<int>(fn)].arity; }
bool math_fn_accepts_int(MathFn fn) { return kMathFns[static_cast<int>(fn)].accepts_int; }
std::string_view reduce_op_name(ReduceOp op) { return kReduceNames[static_cast<int>(op)]; }

std::vector<Expr> axis_exprs(const std::vector<IterVar>& axes) {
  std::vector<Expr> out;
  for (auto& ax : axes) out.push_back(ax.var);
  return out;
}

Expr int_imm(int64_t value, DType t) {
  if (t == DType::Bool) return bool_imm(value != 0);
  assert(!dtype_is_float(t));
  return std::make_shared<IntImmNode>(value, t);
}

Expr bool_imm(bool value) { return std::make_shared<IntImmNode>(value ? 1 : 0, DType::Bool); }

Expr float_imm(double value, DType t) {
  assert(dtype_is_float(t));
  return std::make_shared<FloatImmNode>(value, t);
}

Expr make_const(DType t, double value) {
  if (dtype_is_float(t)) return float_imm(value, t);
  return int_imm(static_cast<int64_t>(value), t);
}

Var make_var(std::string name, DType t) { return std::make_shared<VarNode>(std::move(name), t); }

Expr load(std::string tensor, DType t, std::vector<Expr> indices) {
  return std::make_shared<LoadNode>(std::move(tensor), t, std::move(indices));
}

Expr unary(UnaryOp op, Expr a) {
  if (const int64_t* c = as_const_int(a)) {
    if (op == UnaryOp::Neg && a->dtype != DType::Bool && *c != INT64_MIN) return int_imm(-*c, a->dtype);
    if (op == UnaryOp::Not && a->dtype == DType::Bool) return bool_imm(!*c);
  }
  if (auto* f = a->as<FloatImmNode>(); f && op == UnaryOp::Neg) return float_imm(-f->value, a->dtype);
  return std::make_shared<UnaryNode>(op, std::move(a));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  assert(a->dtype == b->dtype);
  DType result = (is_comparison(op) || is_logical(op)) ? DType::Bool : a->dtype;
  if (!dtype_is_float(a->dtype)) {
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb) {
      // Literals that cannot be folded stay as written; reordering them would not end.
      if (Expr folded = fold_ints(op, *ca, *cb, result)) return folded;
    } else if (Expr simpler = simplify_int_binary(op, a, b)) {
      return simpler;
    }
  }
  return std::make_shared<BinaryNode>(op, std::move(a), std::move(b), result);
}

Expr select(Expr cond, Expr true_value, Expr false_value) {
  assert(true_value->dtype == false_value->dtype);
  if (const int64_t* c = as_const_int(cond)) return *c ? true_value : false_value;
  return std::make_shared<SelectNode>(std::move(cond), std::move(true_value), std::move(false_value));
}

Expr call(MathFn fn, std::vector<Expr> args) {
  assert(static_cast<int>(args.size()) == math_fn_arity(fn));
  return std::make_shared<CallNode>(fn, std::move(args));
}

int64_t wrap_to_dtype(int64_t value, DType t) {
  assert(dtype_is_int(t));
  int bits = 8 * dtype_bytes(t);
  if (bits >= 64) return value;
  uint64_t low = static_cast<uint64_t>(value) & ((uint64_t{1} << bits) - 1);
  uint64_t sign = uint64_t{1} << (bits - 1);
  if (dtype_is_signed(t) && (low & sign)) low |= ~((uint64_t{1} << bits) - 1);
  return static_cast<int64_t>(low);
}

Expr cast(DType t, Expr value) {
  if (value->dtype == t) return value;
  if (const int64_t* c = as_const_int(value); c && value->dtype != DType::Bool) {
    if (dtype_is_float(t)) return float_imm(static_cast<double>(*c), t);
    if (t == DType::Bool) return bool_imm(*c != 0);
    return int_imm(wrap_to_dtype(*c, t), t);
  }
  if (auto* f = value->as<FloatImmNode>(); f && dtype_is_float(t)) return float_imm(f->value, t);
  return std::make_shared<CastNode>(t, std::move(value));
}

Expr reduce(ReduceOp op, std::vector<IterVar> axes, Expr source, Expr condition) {
  return std::make_shared<ReduceNode>(op, std::move(axes), std::move(source), std::move(condition));
}

Expr reduce_identity(ReduceOp op, DType t) {
  switch (op) {
    case ReduceOp::Sum: return make_const(t, 0);
    case ReduceOp::Prod: return make_const(t, 1);
    case ReduceOp::Max:
    case ReduceOp::Min: {
      bool is_max = op == ReduceOp::Max;
      if (dtype_is_float(t)) {
        double inf = std::numeric_limits<double>::infinity();
        return float_imm(is_max ? -inf : inf, t);
      }
      switch (t) {
        case DType::I8: return int_imm(is_max ? INT8_MIN : INT8_MAX, t);
        case DType::I16: return int_imm(is_max ? INT16_MIN : INT16_MAX, t);
        case DType::I32: return int_imm(is_max ? INT32_MIN : INT32_MAX, t);
        case DType::I64: return int_imm(is_max ? INT64_MIN : INT64_MAX, t);
        case DType::U8: return int_imm(is_max ? 0 : UINT8_MAX, t);
        default: return bool_imm(!is_max);
      }
    }
  }
  return nullptr;
}

Expr reduce_combine(ReduceOp op, Expr acc, Expr value) {
  switch (op) {
    case ReduceOp::Sum: return add(std::move(acc), std::move(value));
    case ReduceOp::Prod: return mul(std::move(acc), std::move(value));
    case ReduceOp::Max: return max_of(std::move(acc), std::move(value));
    case ReduceOp::Min: return min_of(std::move(acc), std::move(value));
  }
  return nullptr;
}

const int64_t* as_const_int(const Expr& e) {
  if (auto* n = e->as<IntImmNode>()) return &n->value;
  return nullptr;
}

bool is_const_int(const Expr& e, int64_t value) {
  const int64_t* c = as_const_int(e);
  return c && *c == value;
}

bool is_const_zero(const Expr& e) {
  auto* f = e->as<FloatImmNode>();
  return is_const_int(e, 0) || (f && f->value == 0.0);
}

namespace {
bool all_equal(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structural_equal(a[i], b[i])) return false;
  return true;
}
}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::IntImm: return a->as<IntImmNode>()->value == b->as<IntImmNode>()->value;
    case ExprKind::FloatImm: {
      double x = a->as<FloatImmNode>()->value, y = b->as<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::Var: return false;  // identity was checked above
    case ExprKind::Load: {
      auto *x = a->as<LoadNode>(), *y = b->as<LoadNode>();
      return x->tensor == y->tensor && all_equal(x->indices, y->indices);
    }
    case ExprKind::Unary: {
      auto *x = a->as<UnaryNode>(), *y = b->as<UnaryNode>();
      return x->op == y->op && structural_equal(x->operand, y->operand);
    }
    case ExprKind::Binary: {
      auto *x = a->as<BinaryNode>(), *y = b->as<BinaryNode>();
      return x->op == y->op && structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
    case ExprKind::Select: {
      auto *x = a->as<SelectNode>(), *y = b->as<SelectNode>();
      return structural_equal(x->cond, y->cond) && structural_equal(x->true_value, y->true_value) &&
             structural_equal(x->false_value, y->false_value);
    }
    case ExprKind::Call: {
      auto *x = a->as<CallNode>(), *y = b->as<CallNode>();
      return x->fn == y->fn && all_equal(x->args, y->args);
    }
    case ExprKind::Cast: return structural_equal(a->as<CastNode>()->value, b->as<CastNode>()->value);
    case ExprKind::Reduce: {
      auto *x = a->as<ReduceNode>(), *y = b->as<ReduceNode>();
      if (x->op != y->op || x->axes.size() != y->axes.size()) return false;
      for (size_t i = 0; i < x->axes.size(); ++i)
        if (x->axes[i].var != y->axes[i].var || x->axes[i].extent != y->axes[i].extent) return false;
      if ((x->condition == nullptr) != (y->condition == nullptr)) return false;
      return structural_equal(x->source, y->source) &&
             (!x->condition || structural_equal(x->condition, y->condition));
    }
  }
  return false;
}

namespace {
size_t hash_combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }
}  // namespace

size_t structural_hash(const Expr& e) {
  size_t h = hash_combine(static_cast<size_t>(e->kind), static_cast<size_t>(e->dtype));
  switch (e->kind) {
    case ExprKind::IntImm: return hash_combine(h, std::hash<int64_t>()(e->as<IntImmNode>()->value));
    case ExprKind::FloatImm: return hash_combine(h, std::hash<double>()(e->as<FloatImmNode>()->value));
    case ExprKind::Var: return hash_combine(h, std::hash<const void*>()(e.get()));
    default: break;
  }
  visit_pre_order(e, [&](const Expr& sub) {
    if (sub == e) return true;
    h = hash_combine(h, structural_hash(sub));
    return false;
  });
  if (auto* l = e->as<LoadNode>()) h = hash_combine(h, std::hash<std::string>()(l->tensor));
  if (auto* b = e->as<BinaryNode>()) h = hash_combine(h, static_cast<size_t>(b->op));
  if (auto* c = e->as<CallNode>()) h = hash_combine(h, static_cast<size_t>(c->fn));
  return h;
}

void visit_pre_order(const Expr& e, const std::function<bool(const Expr&)>& f) {
  if (!f(e)) return;
  switch (e->kind) {
    case ExprKind::Load:
      for (auto& i : e->as<LoadNode>()->indices) visit_pre_order(i, f);
      break;
    case ExprKind::Unary: visit_pre_order(e->as<UnaryNode>()->operand, f); break;
    case ExprKind::Binary:
      visit_pre_order(e->as<BinaryNode>()->a, f);
      visit_pre_order(e->as<BinaryNode>()->b, f);
      break;
    case ExprKind::Select: {
      auto* s = e->as<SelectNode>();
      visit_pre_order(s->cond, f);
      visit_pre_order(s->true_value, f);
      visit_pre_order(s->false_value, f);
      break;
    }
    case ExprKind::Call:
      for (auto& a : e->as<CallNode>()->args) visit_pre_order(a, f);
      break;
    case ExprKind::Cast: visit_pre_order(e->as<CastNode>()->value, f); break;
    case ExprKind::Reduce: {
      auto* r = e->as<ReduceNode>();
      visit_pre_order(r->source, f);
      if (r->condition) visit_pre_order(r->condition, f);
      break;
    }
    default: break;
  }
}

bool uses_var(const Expr& e, const VarNode* var) {
  bool found = false;
  visit_pre_order(e, [&](const Expr& sub) {
    if (sub.get() == var) found = true;
    return !found;
  });
  return found;
}

std::vector<const LoadNode*> collect_loads(const Expr& e) {
  std::vector<const LoadNode*> loads;
  visit_pre_order(e, [&](const Expr& sub) {
    if (auto* l = sub->as<LoadNode>()) loads.push_back(l);
    return true;
  });
  return loads;
}

namespace {
// Rewrites a list; returns whether any element changed.
bool rewrite_all(const std::vector<Expr>& in, std::vector<Expr>& out, const std::function<Expr(const Expr&)>& f) {
  bool changed = false;
  out.reserve(in.size());
  for (auto& x : in) {
    out.push_back(rewrite_post_order(x, f));
    changed |= out.back() != x;
  }
  return changed;
}
}  // namespace

Expr rewrite_post_order(const Expr& e, const std::function<Expr(const Expr&)>& f) {
  Expr rebuilt = e;
  switch (e->kind) {
    case ExprKind::Load: {
      auto* n = e->as<LoadNode>();
      std::vector<Expr> idx;
      if (rewrite_all(n->indices, idx, f)) rebuilt = load(n->tensor, n->dtype, std::move(idx));
      break;
    }
    case ExprKind::Unary: {
      auto* n = e->as<UnaryNode>();
      Expr a = rewrite_post_order(n->operand, f);
      if (a != n->operand) rebuilt = unary(n->op, a);
      break;
    }
    case ExprKind::Binary: {
      auto* n = e->as<BinaryNode>();
      Expr a = rewrite_post_order(n->a, f), b = rewrite_post_order(n->b, f);
      if (a != n->a || b != n->b) rebuilt = binary(n->op, a, b);
      break;
    }
    case ExprKind::Select: {
      auto* n = e->as<SelectNode>();
      Expr c = rewrite_post_order(n->cond, f);
      Expr t = rewrite_post_order(n->true_value, f);
      Expr v = rewrite_post_order(n->false_value, f);
      if (c != n->cond || t != n->true_value || v != n->false_value) rebuilt = select(c, t, v);
      break;
    }
    case ExprKind::Call: {
      auto* n = e->as<CallNode>();
      std::vector<Expr> args;
      if (rewrite_all(n->args, args, f)) rebuilt = call(n->fn, std::move(args));
      break;
    }
    case ExprKind::Cast: {
      auto* n = e->as<CastNode>();
      Expr v = rewrite_post_order(n->value, f);
      if (v != n->value) rebuilt = cast(n->dtype, v);
      break;
    }
    case ExprKind::Reduce: {
      auto* n = e->as<ReduceNode>();
      Expr src = rewrite_post_order(n->source, f);
      Expr cond = n->condition ? rewrite_post_order(n->condition, f) : nullptr;
      if (src != n->source || cond != n->condition) rebuilt = reduce(n->op, n->axes, src, cond);
      break;
    }
    default: break;
  }
  Expr replaced = f(rebuilt);
  return replaced ? replaced : rebuilt;
}

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return rewrite_post_order(e, [&](const Expr& n) -> Expr {
    if (n->kind != ExprKind::Var) return nullptr;
    for (auto& [var, value] : map)
      if (var == n.get()) return value;
    return nullptr;
  });
}

Expr replace_loads(const Expr& e, const std::string& tensor,
                   const std::function<Expr(const std::vector<Expr>&)>& f) {
  return rewrite_post_order(e, [&](const Expr& n) -> Expr {
    auto* l = n->as<LoadNode>();
    if (!l || l->tensor != tensor) return nullptr;
    return f(l->indices);
  });
}

}  // namespace ansor
