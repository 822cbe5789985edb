// The lexer of canonical DAG text.
#include "dag/dag_text_lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <string_view>

namespace ansor::dag_text {

void ErrorReporter::fail(int line, int column, const std::string& message) const {
  throw CompileError(SourceLoc{file_, line, column}, message);
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::Newline:
      return "the end of the line";
    case TokenKind::End:
      return "the end of the text";
    default:
      return "'" + t.text + "'";
  }
}

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::vector<Token> lex(const std::string& text, const ErrorReporter& errors) {
  static constexpr std::string_view kTwoChar[] = {"==", "!=", "<=", ">=", "&&", "||"};
  static constexpr std::string_view kOneChar = "[](),:=+-*/%<>!";
  std::vector<Token> tokens;
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    int column = static_cast<int>(i - line_start) + 1;
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '\n') {
      tokens.push_back({TokenKind::Newline, "\n", line, column});
      ++i;
      ++line;
      line_start = i;
      continue;
    }
    size_t start = i;
    if (is_ident_start(c)) {
      while (i < text.size() && is_ident_char(text[i])) ++i;
      tokens.push_back({TokenKind::Ident, text.substr(start, i - start), line, column});
      continue;
    }
    if (is_digit(c)) {
      bool is_float = false;
      while (i < text.size() && is_digit(text[i])) ++i;
      if (i < text.size() && text[i] == '.') {
        is_float = true;
        ++i;
        while (i < text.size() && is_digit(text[i])) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        size_t e = i + 1;
        if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
        if (e >= text.size() || !is_digit(text[e])) errors.fail(line, static_cast<int>(i - line_start) + 1, "malformed exponent");
        i = e;
        while (i < text.size() && is_digit(text[i])) ++i;
        is_float = true;
      }
      tokens.push_back({is_float ? TokenKind::Float : TokenKind::Int, text.substr(start, i - start), line, column});
      continue;
    }
    bool matched = false;
    for (std::string_view op : kTwoChar) {
      if (text.compare(i, op.size(), op) == 0) {
        tokens.push_back({TokenKind::Punct, std::string(op), line, column});
        i += op.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (kOneChar.find(c) != std::string_view::npos) {
      tokens.push_back({TokenKind::Punct, std::string(1, c), line, column});
      ++i;
      continue;
    }
    std::string shown =
        std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    errors.fail(line, column, fmt::format("unexpected character '{}'", shown));
  }
  tokens.push_back({TokenKind::End, "", line, static_cast<int>(text.size() - line_start) + 1});
  return tokens;
}

}  // namespace ansor::dag_text
