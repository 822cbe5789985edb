// Typing canonical DAG text: literals take the dtype of their context.
#include "dag/dag_text_typer.h"

#include <fmt/format.h>

namespace ansor::dag_text {

namespace {

// The dtype of literal-only syntax where nothing requires one.
DType default_type(const Syntax& s) {
  switch (s.kind) {
    case SyntaxKind::Int:
      return kIndexType;
    case SyntaxKind::Float:
      return DType::F64;
    default:
      return s.type ? *s.type : default_type(*s.children.front());
  }
}

// The dtype shared by operands: the first that determines one, else the context's.
DType shared_type(const std::vector<const Syntax*>& operands, std::optional<DType> want) {
  for (const Syntax* o : operands)
    if (o->type) return *o->type;
  return want ? *want : default_type(*operands.front());
}

}  // namespace

void Typer::expect_type(const Syntax& at, const Expr& e, DType t, const char* what) const {
  if (e->dtype != t)
    errors_.fail(at.line, at.column, fmt::format("{} must be {}, not {}", what, dtype_name(t), dtype_name(e->dtype)));
}

Expr Typer::build(const Syntax& s, std::optional<DType> want) {
  switch (s.kind) {
    case SyntaxKind::Int: {
      DType t = want.value_or(kIndexType);
      if (!dtype_is_int(t)) errors_.fail(s.line, s.column, fmt::format("an integer literal where {} is expected", dtype_name(t)));
      return std::make_shared<IntImmNode>(s.int_value, t);
    }
    case SyntaxKind::Float: {
      DType t = want.value_or(DType::F64);
      if (!dtype_is_float(t)) errors_.fail(s.line, s.column, fmt::format("a float literal where {} is expected", dtype_name(t)));
      return std::make_shared<FloatImmNode>(s.float_value, t);
    }
    case SyntaxKind::Bool:
      return bool_imm(s.int_value != 0);
    case SyntaxKind::Var:
      return s.var;
    case SyntaxKind::Load: {
      std::vector<Expr> indices;
      for (const SyntaxPtr& i : s.children) indices.push_back(build(*i, std::nullopt));
      return std::make_shared<LoadNode>(s.tensor, s.dtype, std::move(indices));
    }
    case SyntaxKind::Neg: {
      Expr operand = build(*s.children[0], want);
      return std::make_shared<UnaryNode>(UnaryOp::Neg, std::move(operand));
    }
    case SyntaxKind::Not: {
      Expr operand = build(*s.children[0], DType::Bool);
      expect_type(*s.children[0], operand, DType::Bool, "the operand of '!'");
      return std::make_shared<UnaryNode>(UnaryOp::Not, std::move(operand));
    }
    case SyntaxKind::Binary: {
      const Syntax& sa = *s.children[0];
      const Syntax& sb = *s.children[1];
      BinaryOp op = s.binary_op;
      bool logical = is_logical(op);
      DType t = logical ? DType::Bool : shared_type({&sa, &sb}, is_comparison(op) ? std::nullopt : want);
      Expr a = build(sa, t), b = build(sb, t);
      std::string what = fmt::format("an operand of '{}'", binary_op_symbol(op));
      expect_type(sa, a, t, what.c_str());
      expect_type(sb, b, t, what.c_str());
      // The printer writes x + -c as x - c; builders never leave an integer x - c.
      if (op == BinaryOp::Sub && dtype_is_int(t) && sb.kind == SyntaxKind::Int && sb.int_value > 0)
        return std::make_shared<BinaryNode>(BinaryOp::Add, std::move(a), std::make_shared<IntImmNode>(-sb.int_value, t), t);
      return std::make_shared<BinaryNode>(op, std::move(a), std::move(b), is_comparison(op) || logical ? DType::Bool : t);
    }
    case SyntaxKind::Select: {
      Expr cond = build(*s.children[0], DType::Bool);
      expect_type(*s.children[0], cond, DType::Bool, "the condition of 'select'");
      DType t = shared_type({s.children[1].get(), s.children[2].get()}, want);
      Expr a = build(*s.children[1], t), b = build(*s.children[2], t);
      expect_type(*s.children[1], a, t, "a value of 'select'");
      expect_type(*s.children[2], b, t, "a value of 'select'");
      return std::make_shared<SelectNode>(std::move(cond), std::move(a), std::move(b));
    }
    case SyntaxKind::Call: {
      std::vector<const Syntax*> operands;
      for (const SyntaxPtr& c : s.children) operands.push_back(c.get());
      DType t = shared_type(operands, want);
      std::vector<Expr> args;
      for (const SyntaxPtr& c : s.children) {
        args.push_back(build(*c, t));
        expect_type(*c, args.back(), t, "an argument");
      }
      return std::make_shared<CallNode>(s.fn, std::move(args));
    }
    case SyntaxKind::Cast:
      return std::make_shared<CastNode>(s.dtype, build(*s.children[0], std::nullopt));
    case SyntaxKind::Reduce: {
      Expr source = build(*s.children[0], want);
      Expr condition;
      if (s.children.size() > 1) {
        condition = build(*s.children[1], DType::Bool);
        expect_type(*s.children[1], condition, DType::Bool, "the condition of a reduction");
      }
      return std::make_shared<ReduceNode>(s.reduce_op, s.axes, std::move(source), std::move(condition));
    }
  }
  errors_.fail(s.line, s.column, "unknown expression");
}

}  // namespace ansor::dag_text
