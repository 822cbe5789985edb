// The tokens of canonical DAG text (dag_text.h) and the errors that name their place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace ansor::dag_text {

enum class TokenKind : uint8_t { Ident, Int, Float, Punct, Newline, End };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  int line = 0, column = 0;
};

// Throws CompileErrors at places of one text.
class ErrorReporter {
 public:
  explicit ErrorReporter(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) {}
  [[noreturn]] void fail(int line, int column, const std::string& message) const;
  [[noreturn]] void fail(const Token& t, const std::string& message) const { fail(t.line, t.column, message); }

 private:
  std::shared_ptr<const SourceFile> file_;
};

// "'text'", or "the end of the line" / "the end of the text", for messages.
std::string describe(const Token& t);

// Identifiers, integer and float literals, the punctuation of expressions, and line breaks (only
// "\n": canonical text has no other); spaces separate tokens. Ends with an End token.
std::vector<Token> lex(const std::string& text, const ErrorReporter& errors);

}  // namespace ansor::dag_text
