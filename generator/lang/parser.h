// The parser of kernels.def: tokens to syntax tree, with syntax errors at their position.
#pragma once

#include <memory>

#include "lang/ast.h"

namespace ansor {

// Parses a whole file. Throws CompileError at the first syntax error.
AstFile parse_file(const std::shared_ptr<const SourceFile>& file);

// The deepest nesting of expressions accepted, so that hostile input cannot exhaust the stack.
inline constexpr int kMaxExprDepth = 200;

}  // namespace ansor
