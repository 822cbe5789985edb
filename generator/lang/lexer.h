// The lexer of kernels.def: turns source text into tokens, reporting bad characters,
// malformed numbers and unterminated strings at their position.
#pragma once

#include <memory>
#include <vector>

#include "lang/token.h"

namespace ansor {

// All tokens of the file, ending with Tok::End. Throws CompileError.
std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file);

}  // namespace ansor
