// The parser of kernels.def: tokens to syntax tree, with syntax errors at their position.
#pragma once

#include <memory>

#include "lang/ast.h"

namespace ansor {

// Parses a whole file. Throws CompileError at the first syntax error.
AstFile parse_file(const std::shared_ptr<const SourceFile>& file);

// The deepest nesting of expressions accepted, so that hostile input cannot exhaust the stack.
inline constexpr int kMaxExprDepth = 200;
// The most expression nodes one statement may hold, so that analysing a statement takes bounded
// time (simplifying an index is worse than quadratic in its number of terms).
inline constexpr int kMaxStmtNodes = 1000;

}  // namespace ansor
