// Analysis of expressions in kernels.def: index-form right sides into typed IR expressions (with
// bounds checks of every access), and tensor-form right sides into built-in calls.
#pragma once

#include <string>
#include <vector>

#include "lang/access_bounds.h"
#include "lang/ast.h"
#include "lang/builtins/builtin.h"
#include "lang/scope.h"

namespace ansor {

class ExprAnalyzer {
 public:
  ExprAnalyzer(Scope& scope, GraphBuilder& builder) : scope_(scope), builder_(builder) {}

  // An integer constant expression of literals and `let` constants; `what` names it in errors.
  int64_t eval_int(const AstExpr& e, const std::string& what);
  // A constant number (integer or float) for a keyword argument.
  NumberArg eval_number(const AstExpr& e);

  // The right side of the index-form definition `def_name[axes] = e`; the axes are in scope. A
  // reduction at the top stays in place; reductions elsewhere become operations of their own.
  TypedValue eval_index_form(const AstExpr& e, const std::string& def_name);

  // The right side of the tensor-form definition `def_name = e`.
  Operand eval_tensor_form(const AstExpr& e, const std::string& def_name);

 private:
  struct Context {
    std::string def_name;
    RangeMap ranges;
    std::vector<IndexConstraint> constraints;
  };

  TypedValue eval(const AstExpr& e, Context& ctx, bool top);
  TypedValue eval_ident(const AstExpr& e);
  TypedValue eval_access(const AstExpr& e, Context& ctx);
  TypedValue eval_call(const AstExpr& e, Context& ctx, bool top);
  TypedValue eval_select(const AstExpr& cond, const AstExpr& t, const AstExpr& f, const SourceLoc& loc, Context& ctx);
  TypedValue eval_reduction(const AstExpr& e, Context& ctx, bool top);
  std::vector<TypedValue> eval_positional(const AstExpr& call, Context& ctx);

  Operand eval_operand(const AstExpr& e, const std::string& def_name);
  Operand apply_elementwise(const std::string& op, const SourceLoc& loc, const std::string& def_name,
                            std::vector<Operand> operands,
                            const std::function<TypedValue(const std::vector<TypedValue>&)>& fn);

  Scope& scope_;
  GraphBuilder& builder_;
};

}  // namespace ansor
