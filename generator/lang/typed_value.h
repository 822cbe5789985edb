// Scalar values during semantic analysis, with the dtype rules of kernels.def.
//
// Literals, `let` constants and index variables are "weak": they take the dtype of the other
// operand (`x * 2.0` with x f32 is f32; `X[i] + i` with X i32 is i32). Two strong operands must
// have the same dtype. Weak integers are kept as index-typed (i64) expressions and weak floats as
// f64 expressions until they meet a strong operand or are finalised (i32 and f32 by default).
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"
#include "lang/ast.h"

namespace ansor {

struct TypedValue {
  Expr expr;
  bool weak = false;
  SourceLoc loc;

  bool is_float() const { return dtype_is_float(expr->dtype); }
  bool is_bool() const { return expr->dtype == DType::Bool; }
};

TypedValue weak_int(int64_t v, SourceLoc loc);
TypedValue weak_float(double v, SourceLoc loc);
// An index variable, or any index-typed expression, as a weak integer.
TypedValue weak_index(Expr e, SourceLoc loc);
TypedValue strong(Expr e, SourceLoc loc);

// The value converted to dtype t, or a CompileError when the conversion is not implicit.
TypedValue convert(const TypedValue& v, DType t, const std::string& context);
// Weak values take their default dtype: integers i32, floats f32.
TypedValue finalize(const TypedValue& v);

TypedValue apply_binary(AstBinaryOp op, const TypedValue& a, const TypedValue& b, SourceLoc loc);
TypedValue apply_unary(AstUnaryOp op, const TypedValue& a, SourceLoc loc);
TypedValue apply_select(const TypedValue& c, const TypedValue& t, const TypedValue& f, SourceLoc loc);
TypedValue apply_math(MathFn fn, const std::vector<TypedValue>& args, SourceLoc loc);
TypedValue apply_minmax(bool is_max, const TypedValue& a, const TypedValue& b, SourceLoc loc);
TypedValue apply_cast(DType t, const TypedValue& v, SourceLoc loc);

}  // namespace ansor
