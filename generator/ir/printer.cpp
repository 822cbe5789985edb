// Expression printer with minimal parentheses.
#include "ir/printer.h"

#include <fmt/format.h>

#include <cmath>

namespace ansor {

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

namespace {

// Precedences above every binary operator: unary operators, then atoms.
constexpr int kUnaryPrecedence = 8;
constexpr int kAtomPrecedence = 10;

class Printer {
 public:
  explicit Printer(const PrintNames& names) : names_(names) {}

  // Prints e; parenthesised when it binds looser than `context`.
  std::string print(const Expr& e, int context = 0) {
    int prec = precedence(e);
    std::string s = print_bare(e);
    return prec < context ? "(" + s + ")" : s;
  }

 private:
  static int precedence(const Expr& e) {
    if (auto* b = e->as<BinaryNode>()) return binary_op_precedence(b->op);
    if (e->kind == ExprKind::Unary) return kUnaryPrecedence;
    if (auto* i = e->as<IntImmNode>(); i && i->value < 0) return kUnaryPrecedence;
    if (auto* f = e->as<FloatImmNode>(); f && std::signbit(f->value)) return kUnaryPrecedence;
    return kAtomPrecedence;
  }

  std::string var_name(const VarNode* v) { return names_.var ? names_.var(v) : v->name; }
  std::string tensor_name(const std::string& t) { return names_.tensor ? names_.tensor(t) : t; }

  std::string list(const std::vector<Expr>& xs) {
    std::string s;
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + print(xs[i]);
    return s;
  }

  std::string print_bare(const Expr& e) {
    switch (e->kind) {
      case ExprKind::IntImm: {
        int64_t v = e->as<IntImmNode>()->value;
        if (e->dtype == DType::Bool) return v ? "true" : "false";
        return std::to_string(v);
      }
      case ExprKind::FloatImm: return format_float(e->as<FloatImmNode>()->value);
      case ExprKind::Var: return var_name(e->as<VarNode>());
      case ExprKind::Load: {
        auto* l = e->as<LoadNode>();
        return tensor_name(l->tensor) + "[" + list(l->indices) + "]";
      }
      case ExprKind::Unary: {
        auto* u = e->as<UnaryNode>();
        return fmt::format("{}{}", u->op == UnaryOp::Neg ? '-' : '!', print(u->operand, kUnaryPrecedence + 1));
      }
      case ExprKind::Binary: return print_binary(*e->as<BinaryNode>());
      case ExprKind::Select: {
        auto* s = e->as<SelectNode>();
        return "select(" + print(s->cond) + ", " + print(s->true_value) + ", " + print(s->false_value) + ")";
      }
      case ExprKind::Call: {
        auto* c = e->as<CallNode>();
        return std::string(math_fn_name(c->fn)) + "(" + list(c->args) + ")";
      }
      case ExprKind::Cast: return std::string(dtype_name(e->dtype)) + "(" + print(e->as<CastNode>()->value) + ")";
      case ExprKind::Reduce: {
        auto* r = e->as<ReduceNode>();
        std::string s = std::string(reduce_op_name(r->op)) + "(";
        for (auto& ax : r->axes) s += var_name(ax.var.get()) + ":" + std::to_string(ax.extent) + ", ";
        s += print(r->source);
        if (r->condition) s += ", where = " + print(r->condition);
        return s + ")";
      }
    }
    return "?";
  }

  std::string print_binary(const BinaryNode& b) {
    if (b.op == BinaryOp::Min || b.op == BinaryOp::Max)
      return std::string(binary_op_symbol(b.op)) + "(" + print(b.a) + ", " + print(b.b) + ")";
    int prec = binary_op_precedence(b.op);
    // x + -c prints as x - c.
    if (b.op == BinaryOp::Add) {
      if (const int64_t* c = as_const_int(b.b); c && *c < 0 && *c != INT64_MIN)
        return print(b.a, prec) + " - " + std::to_string(-*c);
    }
    // Left-associative: the right operand needs parentheses at equal precedence.
    return print(b.a, prec) + " " + std::string(binary_op_symbol(b.op)) + " " + print(b.b, prec + 1);
  }

  const PrintNames& names_;
};

}  // namespace

std::string to_string(const Expr& e, const PrintNames& names) { return Printer(names).print(e); }

}  // namespace ansor
