// The implicit-conversion and operator typing rules of kernels.def.
#include "lang/typed_value.h"

#include <fmt/format.h>

namespace ansor {

TypedValue weak_int(int64_t v, SourceLoc loc) { return {int_imm(v), true, std::move(loc)}; }
TypedValue weak_float(double v, SourceLoc loc) { return {float_imm(v, DType::F64), true, std::move(loc)}; }
TypedValue weak_index(Expr e, SourceLoc loc) { return {std::move(e), true, std::move(loc)}; }
TypedValue strong(Expr e, SourceLoc loc) { return {std::move(e), false, std::move(loc)}; }

TypedValue convert(const TypedValue& v, DType t, const std::string& context) {
  if (v.expr->dtype == t) return {v.expr, false, v.loc};
  if (!v.weak)
    throw CompileError(v.loc, fmt::format("{} value used where {} is expected{}; convert it with {}(...)",
                                          dtype_name(v.expr->dtype), dtype_name(t), context, dtype_name(t)));
  if (v.is_float() && !dtype_is_float(t))
    throw CompileError(v.loc, fmt::format("floating-point value used where {} is expected{}; convert it with {}(...)",
                                          dtype_name(t), context, dtype_name(t)));
  if (t == DType::Bool)
    throw CompileError(v.loc, fmt::format("number used where a condition is expected{}", context));
  // A literal takes the dtype of its context only where it keeps its value.
  if (const int64_t* c = as_const_int(v.expr); c && dtype_is_int(t) && wrap_to_dtype(*c, t) != *c)
    throw CompileError(v.loc, fmt::format("integer {} does not fit {}{}", *c, dtype_name(t), context));
  return {cast(t, v.expr), false, v.loc};
}

TypedValue finalize(const TypedValue& v) {
  if (!v.weak) return v;
  if (v.is_bool()) return {v.expr, false, v.loc};
  return {cast(v.is_float() ? DType::F32 : DType::I32, v.expr), false, v.loc};
}

namespace {

std::string op_text(AstBinaryOp op) {
  switch (op) {
    case AstBinaryOp::Or: return "||";
    case AstBinaryOp::And: return "&&";
    case AstBinaryOp::Eq: return "==";
    case AstBinaryOp::Ne: return "!=";
    case AstBinaryOp::Lt: return "<";
    case AstBinaryOp::Le: return "<=";
    case AstBinaryOp::Gt: return ">";
    case AstBinaryOp::Ge: return ">=";
    case AstBinaryOp::Add: return "+";
    case AstBinaryOp::Sub: return "-";
    case AstBinaryOp::Mul: return "*";
    case AstBinaryOp::Div: return "/";
    case AstBinaryOp::Mod: return "%";
  }
  return "?";
}

BinaryOp to_ir(AstBinaryOp op) {
  switch (op) {
    case AstBinaryOp::Or: return BinaryOp::Or;
    case AstBinaryOp::And: return BinaryOp::And;
    case AstBinaryOp::Eq: return BinaryOp::EQ;
    case AstBinaryOp::Ne: return BinaryOp::NE;
    case AstBinaryOp::Lt: return BinaryOp::LT;
    case AstBinaryOp::Le: return BinaryOp::LE;
    case AstBinaryOp::Gt: return BinaryOp::GT;
    case AstBinaryOp::Ge: return BinaryOp::GE;
    case AstBinaryOp::Add: return BinaryOp::Add;
    case AstBinaryOp::Sub: return BinaryOp::Sub;
    case AstBinaryOp::Mul: return BinaryOp::Mul;
    case AstBinaryOp::Div: return BinaryOp::Div;
    case AstBinaryOp::Mod: return BinaryOp::Mod;
  }
  return BinaryOp::Add;
}

// Brings two operands to a common dtype; the result is weak only when both are.
std::pair<TypedValue, TypedValue> unify(const TypedValue& a, const TypedValue& b, const std::string& what, SourceLoc loc) {
  if (a.weak && b.weak) {
    if (a.is_float() == b.is_float() && a.is_bool() == b.is_bool()) return {a, b};
    if (a.is_bool() || b.is_bool()) throw CompileError(loc, fmt::format("cannot combine a condition and a number in {}", what));
    auto to_f64 = [](const TypedValue& v) { return TypedValue{cast(DType::F64, v.expr), true, v.loc}; };
    return {to_f64(a), to_f64(b)};
  }
  if (!a.weak && !b.weak) {
    if (a.expr->dtype != b.expr->dtype)
      throw CompileError(loc, fmt::format("operands of {} have different dtypes, {} and {}; convert one with {}(...)", what,
                                          dtype_name(a.expr->dtype), dtype_name(b.expr->dtype), dtype_name(a.expr->dtype)));
    return {a, b};
  }
  std::string context = " in " + what;
  if (a.weak) return {convert(a, b.expr->dtype, context), b};
  return {a, convert(b, a.expr->dtype, context)};
}

void require_bool(const TypedValue& v, const std::string& what) {
  if (!v.is_bool()) throw CompileError(v.loc, fmt::format("{} needs a condition, found a {} value", what, dtype_name(v.expr->dtype)));
}

void require_number(const TypedValue& v, const std::string& what) {
  if (v.is_bool()) throw CompileError(v.loc, fmt::format("{} needs a number, found a condition", what));
}

}  // namespace

TypedValue apply_binary(AstBinaryOp op, const TypedValue& a, const TypedValue& b, SourceLoc loc) {
  std::string what = "'" + op_text(op) + "'";
  if (op == AstBinaryOp::And || op == AstBinaryOp::Or) {
    require_bool(a, what);
    require_bool(b, what);
    return {binary(to_ir(op), a.expr, b.expr), a.weak && b.weak, loc};
  }
  bool equality = op == AstBinaryOp::Eq || op == AstBinaryOp::Ne;
  if (!equality) {
    require_number(a, what);
    require_number(b, what);
  }
  auto [x, y] = unify(a, b, what, loc);
  BinaryOp ir = to_ir(op);
  if ((ir == BinaryOp::Div || ir == BinaryOp::Mod) && !x.is_float()) {
    if (const int64_t* c = as_const_int(y.expr); c && *c == 0) throw CompileError(b.loc, "division by zero");
  }
  Expr e = binary(ir, x.expr, y.expr);
  // Integer literals are folded as they are combined; one that int64 cannot hold is an error.
  if (as_const_int(x.expr) && as_const_int(y.expr) && !as_const_int(e)) throw CompileError(loc, "integer overflow");
  bool weak = x.weak && y.weak && !is_comparison(ir);
  return {e, weak, loc};
}

TypedValue apply_unary(AstUnaryOp op, const TypedValue& a, SourceLoc loc) {
  if (op == AstUnaryOp::Not) {
    require_bool(a, "'!'");
    return {unary(UnaryOp::Not, a.expr), a.weak, loc};
  }
  require_number(a, "'-'");
  if (a.expr->dtype == DType::U8) throw CompileError(loc, "cannot negate an unsigned u8 value");
  Expr e = unary(UnaryOp::Neg, a.expr);
  if (as_const_int(a.expr) && !as_const_int(e)) throw CompileError(loc, "integer overflow");
  return {e, a.weak, loc};
}

TypedValue apply_select(const TypedValue& c, const TypedValue& t, const TypedValue& f, SourceLoc loc) {
  require_bool(c, "the condition of select");
  auto [x, y] = unify(t, f, "select", loc);
  return {select(c.expr, x.expr, y.expr), x.weak && y.weak, loc};
}

TypedValue apply_math(MathFn fn, const std::vector<TypedValue>& args, SourceLoc loc) {
  std::string what = "'" + std::string(math_fn_name(fn)) + "'";
  if (static_cast<int>(args.size()) != math_fn_arity(fn))
    throw CompileError(loc, fmt::format("{} takes {} argument{}, given {}", what, math_fn_arity(fn),
                                        math_fn_arity(fn) == 1 ? "" : "s", args.size()));
  std::vector<TypedValue> xs = args;
  for (auto& x : xs) require_number(x, what);
  if (xs.size() == 2) std::tie(xs[0], xs[1]) = unify(xs[0], xs[1], what, loc);
  bool weak = true;
  for (auto& x : xs) {
    if (!math_fn_accepts_int(fn) && !x.is_float()) {
      if (!x.weak)
        throw CompileError(x.loc, fmt::format("{} needs a floating-point argument, found {}; convert it with f32(...)", what,
                                              dtype_name(x.expr->dtype)));
      x = {cast(DType::F64, x.expr), true, x.loc};
    }
    weak = weak && x.weak;
  }
  std::vector<Expr> exprs;
  for (auto& x : xs) exprs.push_back(x.expr);
  return {call(fn, std::move(exprs)), weak, loc};
}

TypedValue apply_minmax(bool is_max, const TypedValue& a, const TypedValue& b, SourceLoc loc) {
  std::string what = is_max ? "'max'" : "'min'";
  require_number(a, what);
  require_number(b, what);
  auto [x, y] = unify(a, b, what, loc);
  return {is_max ? max_of(x.expr, y.expr) : min_of(x.expr, y.expr), x.weak && y.weak, loc};
}

TypedValue apply_cast(DType t, const TypedValue& v, SourceLoc loc) {
  if (t == DType::Bool) {
    if (v.is_bool()) return {v.expr, false, loc};
    TypedValue value = finalize(v);
    return {binary(BinaryOp::NE, value.expr, make_const(value.expr->dtype, 0)), false, loc};
  }
  return {cast(t, v.expr), false, loc};
}

}  // namespace ansor
