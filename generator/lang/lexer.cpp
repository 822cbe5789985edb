// Lexer for kernels.def.
#include "lang/lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ansor {

std::string describe(Tok kind) {
  switch (kind) {
    case Tok::Ident: return "a name";
    case Tok::Int: return "an integer";
    case Tok::Float: return "a number";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Assign: return "'='";
    case Tok::Question: return "'?'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::Percent: return "'%'";
    case Tok::Lt: return "'<'";
    case Tok::Le: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::Ge: return "'>='";
    case Tok::EqEq: return "'=='";
    case Tok::Ne: return "'!='";
    case Tok::AndAnd: return "'&&'";
    case Tok::OrOr: return "'||'";
    case Tok::Bang: return "'!'";
    case Tok::End: return "end of file";
  }
  return "?";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case Tok::Ident: return "'" + token.text + "'";
    case Tok::Int:
    case Tok::Float: return "number '" + token.text + "'";
    case Tok::String: return "string \"" + token.text + "\"";
    default: return describe(token.kind);
  }
}

namespace {

class Lexer {
 public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : file_(file), text_(file->text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (;;) {
      skip_space_and_comments();
      Token t = next();
      bool end = t.kind == Tok::End;
      tokens.push_back(std::move(t));
      if (end) return tokens;
    }
  }

 private:
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }

  [[noreturn]] void fail(SourceLoc loc, const std::string& msg) { throw CompileError(loc, msg); }

  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  bool at_line_break() const { return line_break_length(text_, pos_) > 0; }

  // Steps over one character, or over a whole line break ("\r\n" counts once).
  void advance() {
    size_t brk = line_break_length(text_, pos_);
    if (brk > 0) {
      ++line_;
      col_ = 1;
      pos_ += brk;
    } else {
      ++col_;
      ++pos_;
    }
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && !at_line_break()) advance();
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else {
        return;
      }
    }
  }

  Token make(Tok kind, SourceLoc loc, size_t start) {
    Token t;
    t.kind = kind;
    t.loc = std::move(loc);
    t.offset = start;
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  Token next() {
    SourceLoc loc = here();
    size_t start = pos_;
    if (pos_ >= text_.size()) return make(Tok::End, loc, start);
    char c = peek();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') advance();
      return make(Tok::Ident, loc, start);
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))))
      return number(loc, start);
    if (c == '"') return string(loc, start);
    auto two = [&](char second, Tok two_kind, Tok one_kind) {
      advance();
      if (peek() == second) {
        advance();
        return make(two_kind, loc, start);
      }
      return make(one_kind, loc, start);
    };
    switch (c) {
      case '(': advance(); return make(Tok::LParen, loc, start);
      case ')': advance(); return make(Tok::RParen, loc, start);
      case '[': advance(); return make(Tok::LBracket, loc, start);
      case ']': advance(); return make(Tok::RBracket, loc, start);
      case '{': advance(); return make(Tok::LBrace, loc, start);
      case '}': advance(); return make(Tok::RBrace, loc, start);
      case ',': advance(); return make(Tok::Comma, loc, start);
      case ':': advance(); return make(Tok::Colon, loc, start);
      case '?': advance(); return make(Tok::Question, loc, start);
      case '+': advance(); return make(Tok::Plus, loc, start);
      case '-': advance(); return make(Tok::Minus, loc, start);
      case '*': advance(); return make(Tok::Star, loc, start);
      case '/': advance(); return make(Tok::Slash, loc, start);
      case '%': advance(); return make(Tok::Percent, loc, start);
      case '<': return two('=', Tok::Le, Tok::Lt);
      case '>': return two('=', Tok::Ge, Tok::Gt);
      case '=': return two('=', Tok::EqEq, Tok::Assign);
      case '!': return two('=', Tok::Ne, Tok::Bang);
      case '&':
        if (peek(1) == '&') {
          advance();
          advance();
          return make(Tok::AndAnd, loc, start);
        }
        fail(loc, "unexpected character '&'; did you mean '&&'?");
      case '|':
        if (peek(1) == '|') {
          advance();
          advance();
          return make(Tok::OrOr, loc, start);
        }
        fail(loc, "unexpected character '|'; did you mean '||'?");
      default: break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isprint(u)) fail(loc, fmt::format("unexpected character '{}'", c));
    fail(loc, fmt::format("unexpected byte 0x{:02x}", u));
  }

  Token number(SourceLoc loc, size_t start) {
    bool is_float = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    if (peek() == '.') {
      is_float = true;
      advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(loc, "malformed number: exponent has no digits");
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.')
      fail(loc, fmt::format("malformed number '{}'", text_.substr(start, pos_ - start + 1)));
    Token t = make(is_float ? Tok::Float : Tok::Int, loc, start);
    errno = 0;
    if (is_float) {
      t.float_value = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(t.float_value)) fail(loc, fmt::format("number '{}' is out of range", t.text));
    } else {
      char* end = nullptr;
      unsigned long long v = std::strtoull(t.text.c_str(), &end, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
        fail(loc, fmt::format("integer '{}' is too large", t.text));
      t.int_value = static_cast<int64_t>(v);
      t.float_value = static_cast<double>(v);
    }
    return t;
  }

  Token string(SourceLoc loc, size_t start) {
    advance();  // opening quote
    std::string value;
    for (;;) {
      if (pos_ >= text_.size() || at_line_break()) fail(loc, "unterminated string");
      char c = peek();
      if (c == '"') break;
      if (c == '\\') {
        advance();
        char e = peek();
        if (e != '"' && e != '\\') fail(here(), "unknown escape in string; only \\\" and \\\\ are allowed");
        value += e;
        advance();
        continue;
      }
      value += c;
      advance();
    }
    advance();  // closing quote
    Token t = make(Tok::String, loc, start);
    t.text = value;
    return t;
  }

  std::shared_ptr<const SourceFile> file_;
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file) { return Lexer(file).run(); }

}  // namespace ansor
