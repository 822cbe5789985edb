// The syntax tree of canonical DAG text and the typing pass that turns it into expressions.
//
// The text holds no dtype for literals, so the parser records for each node the dtype it has
// whatever its context (`type`), and the typer gives literals the dtype their context requires.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dag/dag_text_lexer.h"
#include "ir/expr.h"

namespace ansor::dag_text {

enum class SyntaxKind : uint8_t { Int, Float, Bool, Var, Load, Neg, Not, Binary, Select, Call, Cast, Reduce };

struct Syntax;
using SyntaxPtr = std::unique_ptr<Syntax>;

// An expression as written. `type` is the dtype the node has whatever its context (null for
// literals and for expressions of literals alone); `depth` bounds recursion.
struct Syntax {
  SyntaxKind kind = SyntaxKind::Int;
  int line = 0, column = 0;
  int64_t int_value = 0;
  double float_value = 0;
  Var var;
  std::string tensor;
  DType dtype = DType::F32;  // a load's tensor, a cast's target
  BinaryOp binary_op = BinaryOp::Add;
  MathFn fn = MathFn::Exp;
  ReduceOp reduce_op = ReduceOp::Sum;
  std::vector<IterVar> axes;        // a reduction's
  std::vector<SyntaxPtr> children;  // operands, indices, arguments; a reduction's source then condition
  std::optional<DType> type;
  int depth = 1;
};

// Builds expressions from syntax, giving each literal the dtype its context requires (`want`);
// where nothing requires one, integers are index-typed (i64) and floats f64, as kernels.def keeps
// its weak literals. Operands that must agree are checked, so that no malformed text reaches the
// IR's assertions.
class Typer {
 public:
  explicit Typer(const ErrorReporter& errors) : errors_(errors) {}

  // The expression of s, where `want` is the dtype its context requires, if any.
  Expr build(const Syntax& s, std::optional<DType> want);

 private:
  void expect_type(const Syntax& at, const Expr& e, DType t, const char* what) const;

  const ErrorReporter& errors_;
};

}  // namespace ansor::dag_text
