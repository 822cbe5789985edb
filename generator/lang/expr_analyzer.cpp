// Expression analysis for kernels.def: names, dtypes, accesses, reductions, built-in calls.
#include "lang/expr_analyzer.h"

#include <fmt/format.h>

#include <algorithm>

namespace ansor {

namespace {

bool is_reduce_name(const std::string& n) { return n == "sum" || n == "max" || n == "min" || n == "prod"; }

ReduceOp reduce_op_of(const std::string& n) {
  if (n == "max") return ReduceOp::Max;
  if (n == "min") return ReduceOp::Min;
  if (n == "prod") return ReduceOp::Prod;
  return ReduceOp::Sum;
}

std::optional<MathFn> math_fn_of(const std::string& n) {
#define MATH_FUNCTION(Enum, name, arity, accepts_int) \
  if (n == name) return MathFn::Enum;
#include "ir/math_function.def"
  return std::nullopt;
}

std::string binary_suffix(AstBinaryOp op) {
  switch (op) {
    case AstBinaryOp::Or: return "or";
    case AstBinaryOp::And: return "and";
    case AstBinaryOp::Eq: return "eq";
    case AstBinaryOp::Ne: return "ne";
    case AstBinaryOp::Lt: return "lt";
    case AstBinaryOp::Le: return "le";
    case AstBinaryOp::Gt: return "gt";
    case AstBinaryOp::Ge: return "ge";
    case AstBinaryOp::Add: return "add";
    case AstBinaryOp::Sub: return "sub";
    case AstBinaryOp::Mul: return "mul";
    case AstBinaryOp::Div: return "div";
    case AstBinaryOp::Mod: return "mod";
  }
  return "op";
}

bool has_axis_arg(const AstExpr& call) {
  return std::any_of(call.args.begin(), call.args.end(), [](const AstArg& a) { return a.kind == AstArg::Kind::Axis; });
}

}  // namespace

// ---- Constants ----------------------------------------------------------------------------------

int64_t ExprAnalyzer::eval_int(const AstExpr& e, const std::string& what) {
  auto fail = [&](const SourceLoc& loc) -> int64_t {
    throw CompileError(loc, fmt::format("{} must be an integer expression of literals and 'let' constants", what));
  };
  switch (e.kind) {
    case AstExpr::Kind::Int: return e.int_value;
    case AstExpr::Kind::Ident: {
      if (const LetConstant* c = scope_.let(e.name)) return c->value;
      if (scope_.index_var(e.name) || scope_.tensor(e.name)) return fail(e.loc);
      throw CompileError(e.loc, fmt::format("unknown name '{}'", e.name));
    }
    case AstExpr::Kind::Unary:
      if (e.unary_op == AstUnaryOp::Neg) {
        int64_t v = eval_int(*e.operands[0], what);
        if (v == INT64_MIN) throw CompileError(e.loc, "integer overflow");
        return -v;
      }
      return fail(e.loc);
    case AstExpr::Kind::Binary: {
      int64_t a = eval_int(*e.operands[0], what), b = eval_int(*e.operands[1], what), r = 0;
      bool overflow = false;
      switch (e.binary_op) {
        case AstBinaryOp::Add: overflow = __builtin_add_overflow(a, b, &r); break;
        case AstBinaryOp::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
        case AstBinaryOp::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
        case AstBinaryOp::Div:
        case AstBinaryOp::Mod: {
          if (b == 0) throw CompileError(e.operands[1]->loc, "division by zero");
          if (a == INT64_MIN && b == -1) throw CompileError(e.loc, "integer overflow");
          int64_t q = a / b;
          if (a % b != 0 && ((a < 0) != (b < 0))) --q;
          r = e.binary_op == AstBinaryOp::Div ? q : a - q * b;
          break;
        }
        default: return fail(e.loc);
      }
      if (overflow) throw CompileError(e.loc, "integer overflow");
      return r;
    }
    default: return fail(e.loc);
  }
}

NumberArg ExprAnalyzer::eval_number(const AstExpr& e) {
  NumberArg n;
  n.loc = e.loc;
  const AstExpr* inner = &e;
  bool negate = false;
  if (e.kind == AstExpr::Kind::Unary && e.unary_op == AstUnaryOp::Neg && e.operands[0]->kind == AstExpr::Kind::Float) {
    inner = e.operands[0].get();
    negate = true;
  }
  if (inner->kind == AstExpr::Kind::Float) {
    n.is_float = true;
    n.float_value = negate ? -inner->float_value : inner->float_value;
    return n;
  }
  n.int_value = eval_int(e, "an argument value");
  return n;
}

// ---- Index form ---------------------------------------------------------------------------------

TypedValue ExprAnalyzer::eval_index_form(const AstExpr& e, const std::string& def_name) {
  Context ctx;
  ctx.def_name = def_name;
  for (auto& v : scope_.index_vars()) ctx.ranges[v.var.var.get()] = Interval::range(v.var.extent);
  return eval(e, ctx, true);
}

TypedValue ExprAnalyzer::eval(const AstExpr& e, Context& ctx, bool top) {
  switch (e.kind) {
    case AstExpr::Kind::Int: return weak_int(e.int_value, e.loc);
    case AstExpr::Kind::Float: return weak_float(e.float_value, e.loc);
    case AstExpr::Kind::Ident: return eval_ident(e);
    case AstExpr::Kind::Access: return eval_access(e, ctx);
    case AstExpr::Kind::Call: return eval_call(e, ctx, top);
    case AstExpr::Kind::Unary: return apply_unary(e.unary_op, eval(*e.operands[0], ctx, false), e.loc);
    case AstExpr::Kind::Binary: {
      TypedValue a = eval(*e.operands[0], ctx, false);
      TypedValue b = eval(*e.operands[1], ctx, false);
      return apply_binary(e.binary_op, a, b, e.loc);
    }
    case AstExpr::Kind::Ternary: return eval_select(*e.operands[0], *e.operands[1], *e.operands[2], e.loc, ctx);
  }
  throw CompileError(e.loc, "unsupported expression");
}

TypedValue ExprAnalyzer::eval_ident(const AstExpr& e) {
  if (const IterVar* v = scope_.index_var(e.name)) return weak_index(v->var, e.loc);
  if (const LetConstant* c = scope_.let(e.name)) return weak_int(c->value, e.loc);
  if (scope_.tensor(e.name))
    throw CompileError(e.loc, fmt::format("tensor '{}' must be indexed here, as {}[...]", e.name, e.name));
  throw CompileError(e.loc, fmt::format("unknown name '{}'", e.name));
}

TypedValue ExprAnalyzer::eval_access(const AstExpr& e, Context& ctx) {
  const TensorRef* t = scope_.tensor(e.name);
  if (!t) {
    if (scope_.index_var(e.name) || scope_.let(e.name))
      throw CompileError(e.loc, fmt::format("'{}' is not a tensor and cannot be indexed", e.name));
    throw CompileError(e.loc, fmt::format("unknown tensor '{}'", e.name));
  }
  if (static_cast<int>(e.operands.size()) != t->rank())
    throw CompileError(e.loc, fmt::format("rank mismatch: '{}' has rank {} but is indexed with {} index{}", e.name, t->rank(),
                                          e.operands.size(), e.operands.size() == 1 ? "" : "es"));
  std::vector<Expr> indices;
  for (size_t d = 0; d < e.operands.size(); ++d) {
    const AstExpr& ie = *e.operands[d];
    TypedValue v = eval(ie, ctx, false);
    if (v.is_float() || v.is_bool())
      throw CompileError(ie.loc, fmt::format("index {} of '{}' must be an integer, found a {} value", d + 1, e.name,
                                             v.is_bool() ? "bool" : dtype_name(v.expr->dtype)));
    if (!collect_loads(v.expr).empty())
      throw CompileError(ie.loc, fmt::format("index {} of '{}' depends on tensor values; indices must be computed from index "
                                             "variables and constants",
                                             d + 1, e.name));
    Expr idx = simplify(cast(kIndexType, v.expr), ctx.ranges, SimplifyRules::Canonical);
    Interval range = constrained_bound(idx, ctx.ranges, ctx.constraints);
    int64_t extent = t->shape[d];
    if (!range.bounded() || range.min < 0 || range.max >= extent) {
      std::string span = range.bounded() ? fmt::format("[{}, {}]", range.min, range.max) : std::string("an unbounded range");
      throw CompileError(ie.loc, fmt::format("index {} of '{}' can go out of bounds: it ranges over {} but the extent is {}", d + 1,
                                             e.name, span, extent));
    }
    indices.push_back(idx);
  }
  return strong(load(t->name, t->dtype, std::move(indices)), e.loc);
}

TypedValue ExprAnalyzer::eval_select(const AstExpr& cond, const AstExpr& t, const AstExpr& f, const SourceLoc& loc, Context& ctx) {
  TypedValue c = eval(cond, ctx, false);
  if (!c.is_bool()) throw CompileError(cond.loc, "the condition of select must be a comparison or a bool value");
  size_t saved = ctx.constraints.size();
  add_constraints(c.expr, true, ctx.constraints);
  TypedValue a = eval(t, ctx, false);
  ctx.constraints.resize(saved);
  add_constraints(c.expr, false, ctx.constraints);
  TypedValue b = eval(f, ctx, false);
  ctx.constraints.resize(saved);
  return apply_select(c, a, b, loc);
}

std::vector<TypedValue> ExprAnalyzer::eval_positional(const AstExpr& call, Context& ctx) {
  std::vector<TypedValue> values;
  for (auto& arg : call.args) {
    if (arg.kind != AstArg::Kind::Positional)
      throw CompileError(arg.loc, fmt::format("'{}' takes no named arguments", call.name));
    values.push_back(eval(*arg.value, ctx, false));
  }
  return values;
}

TypedValue ExprAnalyzer::eval_call(const AstExpr& e, Context& ctx, bool top) {
  if (has_axis_arg(e)) {
    if (!is_reduce_name(e.name))
      throw CompileError(e.loc, fmt::format("'{}' is not a reduction; reductions are sum, max, min and prod", e.name));
    return eval_reduction(e, ctx, top);
  }
  if (e.name == "select") {
    if (e.args.size() != 3 || std::any_of(e.args.begin(), e.args.end(), [](auto& a) { return a.kind != AstArg::Kind::Positional; }))
      throw CompileError(e.loc, "'select' takes 3 arguments: select(condition, value if true, value if false)");
    return eval_select(*e.args[0].value, *e.args[1].value, *e.args[2].value, e.loc, ctx);
  }
  if (is_reduce_name(e.name) && e.name != "max" && e.name != "min")
    throw CompileError(e.loc, fmt::format("'{}' needs reduction axes first: {}(k:extent, expression)", e.name, e.name));
  if (e.name == "max" || e.name == "min") {
    std::vector<TypedValue> args = eval_positional(e, ctx);
    if (args.size() != 2)
      throw CompileError(e.loc, fmt::format("'{}' takes 2 values, or reduction axes and a value: {}(k:extent, expression)", e.name, e.name));
    return apply_minmax(e.name == "max", args[0], args[1], e.loc);
  }
  if (auto fn = math_fn_of(e.name)) return apply_math(*fn, eval_positional(e, ctx), e.loc);
  if (auto t = parse_dtype(e.name)) {
    std::vector<TypedValue> args = eval_positional(e, ctx);
    if (args.size() != 1) throw CompileError(e.loc, fmt::format("'{}' takes 1 argument", e.name));
    return apply_cast(*t, args[0], e.loc);
  }
  if (find_builtin(e.name))
    throw CompileError(e.loc, fmt::format("'{}' is a tensor operator; use it in tensor form, as in Y = {}(...)", e.name, e.name));
  throw CompileError(e.loc, fmt::format("unknown function '{}'", e.name));
}

TypedValue ExprAnalyzer::eval_reduction(const AstExpr& e, Context& ctx, bool top) {
  if (e.args.size() < 2 || e.args.back().kind != AstArg::Kind::Positional)
    throw CompileError(e.loc, fmt::format("'{}' needs reduction axes and then the reduced expression: {}(k:extent, expression)", e.name, e.name));
  std::vector<IterVar> axes;
  for (size_t i = 0; i + 1 < e.args.size(); ++i) {
    const AstArg& a = e.args[i];
    if (a.kind != AstArg::Kind::Axis)
      throw CompileError(a.loc, fmt::format("expected a reduction axis (name:extent) in '{}'; the reduced expression comes last", e.name));
    scope_.check_new_name(a.name, a.loc, "reduction axis");
    for (auto& other : axes)
      if (other.var->name == a.name) throw CompileError(a.loc, fmt::format("reduction axis '{}' appears twice", a.name));
    int64_t extent = eval_int(*a.value, fmt::format("the extent of '{}'", a.name));
    if (extent < 1) throw CompileError(a.value->loc, fmt::format("the extent of '{}' must be positive, given {}", a.name, extent));
    axes.push_back({make_var(a.name), extent});
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    scope_.push_index_var(axes[i].var->name, axes[i], e.args[i].loc);
    ctx.ranges[axes[i].var.get()] = Interval::range(axes[i].extent);
  }
  TypedValue body = eval(*e.args.back().value, ctx, false);
  scope_.pop_index_vars(axes.size());
  for (auto& ax : axes) ctx.ranges.erase(ax.var.get());

  if (body.is_bool()) throw CompileError(e.args.back().loc, fmt::format("'{}' needs numbers; convert the condition with i32(...)", e.name));
  body = finalize(body);
  Expr r = reduce(reduce_op_of(e.name), axes, body.expr);
  if (top) return strong(r, e.loc);

  // A reduction inside a larger expression becomes an operation over the variables it uses.
  std::vector<IterVar> new_axes;
  std::vector<Expr> at;
  VarMap rename;
  for (auto& v : scope_.index_vars()) {
    if (!uses_var(r, v.var.var.get())) continue;
    IterVar fresh{make_var(v.name), v.var.extent};
    new_axes.push_back(fresh);
    at.push_back(v.var.var);
    rename.push_back({v.var.var.get(), fresh.var});
  }
  TensorRef t = builder_.add_compute(builder_.unique_name(ctx.def_name + "." + e.name), std::move(new_axes), substitute(r, rename));
  return strong(load(t.name, t.dtype, std::move(at)), e.loc);
}

// ---- Tensor form --------------------------------------------------------------------------------

Operand ExprAnalyzer::eval_tensor_form(const AstExpr& e, const std::string& def_name) { return eval_operand(e, def_name); }

Operand ExprAnalyzer::apply_elementwise(const std::string& op, const SourceLoc& loc, const std::string& def_name,
                                        std::vector<Operand> operands,
                                        const std::function<TypedValue(const std::vector<TypedValue>&)>& fn) {
  bool any_tensor = std::any_of(operands.begin(), operands.end(), [](const Operand& o) { return o.is_tensor; });
  Operand out;
  out.loc = loc;
  if (!any_tensor) {
    std::vector<TypedValue> values;
    for (auto& o : operands) values.push_back(o.scalar);
    out.scalar = fn(values);
    return out;
  }
  BuiltinCall call(builder_, op, loc, def_name, std::move(operands), {});
  out.is_tensor = true;
  out.tensor = elementwise(call, op, call.operands(), fn);
  return out;
}

Operand ExprAnalyzer::eval_operand(const AstExpr& e, const std::string& def_name) {
  Operand out;
  out.loc = e.loc;
  switch (e.kind) {
    case AstExpr::Kind::Int: out.scalar = weak_int(e.int_value, e.loc); return out;
    case AstExpr::Kind::Float: out.scalar = weak_float(e.float_value, e.loc); return out;
    case AstExpr::Kind::Ident:
      if (const TensorRef* t = scope_.tensor(e.name)) {
        out.is_tensor = true;
        out.tensor = *t;
        return out;
      }
      if (const LetConstant* c = scope_.let(e.name)) {
        out.scalar = weak_int(c->value, e.loc);
        return out;
      }
      throw CompileError(e.loc, fmt::format("unknown tensor '{}'", e.name));
    case AstExpr::Kind::Access:
      throw CompileError(e.loc, fmt::format("indexing '{}' needs index form: write Y[i:..., ...] = {}[...]", e.name, e.name));
    case AstExpr::Kind::Unary: {
      AstUnaryOp op = e.unary_op;
      SourceLoc loc = e.loc;
      return apply_elementwise(op == AstUnaryOp::Neg ? "neg" : "not", e.loc, def_name, {eval_operand(*e.operands[0], def_name)},
                               [op, loc](const std::vector<TypedValue>& v) { return apply_unary(op, v[0], loc); });
    }
    case AstExpr::Kind::Binary: {
      AstBinaryOp op = e.binary_op;
      SourceLoc loc = e.loc;
      Operand a = eval_operand(*e.operands[0], def_name);
      Operand b = eval_operand(*e.operands[1], def_name);
      return apply_elementwise(binary_suffix(op), e.loc, def_name, {a, b},
                               [op, loc](const std::vector<TypedValue>& v) { return apply_binary(op, v[0], v[1], loc); });
    }
    case AstExpr::Kind::Ternary: {
      SourceLoc loc = e.loc;
      std::vector<Operand> ops;
      for (auto& x : e.operands) ops.push_back(eval_operand(*x, def_name));
      return apply_elementwise("select", e.loc, def_name, std::move(ops),
                               [loc](const std::vector<TypedValue>& v) { return apply_select(v[0], v[1], v[2], loc); });
    }
    case AstExpr::Kind::Call: break;
  }
  if (has_axis_arg(e))
    throw CompileError(e.loc, fmt::format("reductions need index form: write Y[i:..., ...] = {}(k:extent, ...)", e.name));
  const BuiltinFn* fn = find_builtin(e.name);
  if (!fn) throw CompileError(e.loc, fmt::format("unknown operator '{}'", e.name));
  std::vector<Operand> operands;
  std::vector<KeywordArg> keywords;
  for (auto& arg : e.args) {
    switch (arg.kind) {
      case AstArg::Kind::Positional: operands.push_back(eval_operand(*arg.value, def_name)); break;
      case AstArg::Kind::Keyword: keywords.push_back({arg.name, arg.loc, false, {eval_number(*arg.value)}}); break;
      case AstArg::Kind::KeywordList: {
        KeywordArg k{arg.name, arg.loc, true, {}};
        for (auto& x : arg.list) k.values.push_back(eval_number(*x));
        keywords.push_back(std::move(k));
        break;
      }
      case AstArg::Kind::Axis: break;
    }
  }
  BuiltinCall call(builder_, e.name, e.loc, def_name, std::move(operands), std::move(keywords));
  out.is_tensor = true;
  out.tensor = (*fn)(call);
  return out;
}

}  // namespace ansor
