// Expressions: the scalar language shared by tensor definitions, the ComputeDAG and lowered loop
// programs.
//
// Nodes are immutable and shared (Expr is a shared_ptr to a const node), so rewriting builds new
// nodes only where something changed. Variables are compared by identity: two VarNodes with the
// same name are different variables. Index arithmetic uses kIndexType; integer Div and Mod are
// floor division and floor modulo.
//
// The builder functions below fold integer constants and drop integer identities (x + 0, x * 1),
// so that index expressions built by splits and bound inference stay readable. They never change
// floating-point results.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace ansor {

enum class ExprKind : uint8_t { IntImm, FloatImm, Var, Load, Unary, Binary, Select, Call, Cast, Reduce };

enum class BinaryOp : uint8_t {
#define BINARY_OP(Enum, symbol, category, precedence) Enum,
#include "ir/binary_op.def"
};

enum class MathFn : uint8_t {
#define MATH_FUNCTION(Enum, name, arity, accepts_int) Enum,
#include "ir/math_function.def"
};

enum class ReduceOp : uint8_t {
#define REDUCE_OP(Enum, name) Enum,
#include "ir/reduce_op.def"
};

enum class UnaryOp : uint8_t { Neg, Not };

std::string_view binary_op_symbol(BinaryOp op);
int binary_op_precedence(BinaryOp op);
bool is_comparison(BinaryOp op);
bool is_logical(BinaryOp op);
std::string_view math_fn_name(MathFn fn);
int math_fn_arity(MathFn fn);
bool math_fn_accepts_int(MathFn fn);
std::string_view reduce_op_name(ReduceOp op);

class ExprNode {
 public:
  virtual ~ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;

  const ExprKind kind;
  const DType dtype;

  template <class T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
};

using Expr = std::shared_ptr<const ExprNode>;

struct IntImmNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  IntImmNode(int64_t v, DType t) : ExprNode(kKind, t), value(v) {}
  const int64_t value;  // also bools (0 or 1)
};

struct FloatImmNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  FloatImmNode(double v, DType t) : ExprNode(kKind, t), value(v) {}
  const double value;
};

struct VarNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  VarNode(std::string n, DType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};
using Var = std::shared_ptr<const VarNode>;

// An element of a tensor (or of a buffer, in lowered programs) by its multi-dimensional index.
struct LoadNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  LoadNode(std::string t, DType dt, std::vector<Expr> idx)
      : ExprNode(kKind, dt), tensor(std::move(t)), indices(std::move(idx)) {}
  const std::string tensor;
  const std::vector<Expr> indices;
};

struct UnaryNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryNode(UnaryOp o, Expr a) : ExprNode(kKind, a->dtype), op(o), operand(std::move(a)) {}
  const UnaryOp op;
  const Expr operand;
};

struct BinaryNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryNode(BinaryOp o, Expr x, Expr y, DType t) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
};

struct SelectNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t->dtype), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};

struct CallNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallNode(MathFn f, std::vector<Expr> a) : ExprNode(kKind, a.front()->dtype), fn(f), args(std::move(a)) {}
  const MathFn fn;
  const std::vector<Expr> args;
};

struct CastNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  CastNode(DType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
};

// A loop variable with its range [0, extent).
struct IterVar {
  Var var;
  int64_t extent = 0;
};

// A reduction over `axes` of `source`; when `condition` is set, only points where it holds
// contribute (rfactor of a ragged split produces such conditions).
struct ReduceNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  ReduceNode(ReduceOp o, std::vector<IterVar> ax, Expr src, Expr cond)
      : ExprNode(kKind, src->dtype), op(o), axes(std::move(ax)), source(std::move(src)), condition(std::move(cond)) {}
  const ReduceOp op;
  const std::vector<IterVar> axes;
  const Expr source;
  const Expr condition;  // may be null
};

// The variables of axes, as expressions (the index of an element at those axes).
std::vector<Expr> axis_exprs(const std::vector<IterVar>& axes);

// ---- Builders ----------------------------------------------------------------------------------

Expr int_imm(int64_t value, DType t = kIndexType);
Expr bool_imm(bool value);
Expr float_imm(double value, DType t = DType::F32);
// A literal of dtype t holding `value` (integer types round toward zero).
Expr make_const(DType t, double value);
Var make_var(std::string name, DType t = kIndexType);
Expr load(std::string tensor, DType t, std::vector<Expr> indices);
Expr unary(UnaryOp op, Expr a);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr select(Expr cond, Expr true_value, Expr false_value);
Expr call(MathFn fn, std::vector<Expr> args);
// Casts of integer constants fold as C++ converts: to the target's width, modulo 2^bits.
Expr cast(DType t, Expr value);
// An integer value converted to the integer dtype t: its low bits, sign-extended when t is signed.
int64_t wrap_to_dtype(int64_t value, DType t);
Expr reduce(ReduceOp op, std::vector<IterVar> axes, Expr source, Expr condition = nullptr);

inline Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr div(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr mod(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
inline Expr min_of(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
inline Expr max_of(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }
inline Expr lt(Expr a, Expr b) { return binary(BinaryOp::LT, std::move(a), std::move(b)); }
inline Expr le(Expr a, Expr b) { return binary(BinaryOp::LE, std::move(a), std::move(b)); }
inline Expr ge(Expr a, Expr b) { return binary(BinaryOp::GE, std::move(a), std::move(b)); }
inline Expr eq(Expr a, Expr b) { return binary(BinaryOp::EQ, std::move(a), std::move(b)); }
inline Expr logical_and(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
inline Expr logical_or(Expr a, Expr b) { return binary(BinaryOp::Or, std::move(a), std::move(b)); }

// Index-typed shorthands.
inline Expr add(Expr a, int64_t b) { return add(std::move(a), int_imm(b)); }
inline Expr mul(Expr a, int64_t b) { return mul(std::move(a), int_imm(b)); }

// The identity of a reduction in dtype t (0 for sum, lowest value for max, ...).
Expr reduce_identity(ReduceOp op, DType t);
// acc combined with value by the reduction's operator.
Expr reduce_combine(ReduceOp op, Expr acc, Expr value);

// ---- Queries ------------------------------------------------------------------------------------

// The value of an integer or bool literal, or null.
const int64_t* as_const_int(const Expr& e);
bool is_const_int(const Expr& e, int64_t value);
// An integer, bool or float literal of value zero.
bool is_const_zero(const Expr& e);
// Deep equality; variables are equal when they are the same variable.
bool structural_equal(const Expr& a, const Expr& b);
size_t structural_hash(const Expr& e);

// Calls f on every node in pre-order; f returns false to skip a node's children.
void visit_pre_order(const Expr& e, const std::function<bool(const Expr&)>& f);
bool uses_var(const Expr& e, const VarNode* var);
// Every load in e, in evaluation order.
std::vector<const LoadNode*> collect_loads(const Expr& e);

// ---- Rewriting -----------------------------------------------------------------------------------

// Rebuilds e bottom-up: f is offered each node after its children were rewritten and returns a
// replacement or null to keep it. Unchanged subtrees are shared, not copied.
Expr rewrite_post_order(const Expr& e, const std::function<Expr(const Expr&)>& f);

using VarMap = std::vector<std::pair<const VarNode*, Expr>>;
// Replaces variables by expressions.
Expr substitute(const Expr& e, const VarMap& map);
// Replaces the tensor of every load of `tensor` by what f returns for the load's indices.
Expr replace_loads(const Expr& e, const std::string& tensor, const std::function<Expr(const std::vector<Expr>&)>& f);

}  // namespace ansor
