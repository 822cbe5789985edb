// Tokens of kernels.def.
#pragma once

#include <cstdint>
#include <string>

#include "support/diagnostics.h"

namespace ansor {

enum class Tok : uint8_t {
  Ident, Int, Float, String,
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Colon, Assign, Question,
  Plus, Minus, Star, Slash, Percent,
  Lt, Le, Gt, Ge, EqEq, Ne, AndAnd, OrOr, Bang,
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::string text;  // identifier name, string contents, or the literal as written
  int64_t int_value = 0;
  double float_value = 0;
  SourceLoc loc;
  size_t offset = 0;  // byte offset of the token's first character
};

// How a token kind is named in "expected X" messages.
std::string describe(Tok kind);
// How a particular token is named in "unexpected X" messages.
std::string describe(const Token& token);

}  // namespace ansor
