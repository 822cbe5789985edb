// Recursive-descent parser for kernels.def (grammar in docs/language.md).
#include "lang/parser.h"

#include <fmt/format.h>

#include "lang/lexer.h"

namespace ansor {

namespace {

class Parser {
 public:
  Parser(const std::shared_ptr<const SourceFile>& file) : file_(file), tokens_(tokenize(file)) {}

  AstFile run() {
    AstFile out;
    out.source = file_;
    while (!at(Tok::End)) {
      if (at_keyword("let")) {
        out.items.emplace_back(parse_let());
      } else if (at_keyword("kernel")) {
        out.items.emplace_back(parse_kernel());
      } else if (at_keyword("network")) {
        out.items.emplace_back(parse_network());
      } else {
        fail(cur(), fmt::format("expected 'kernel', 'network' or 'let', found {}", describe(cur())));
      }
    }
    return out;
  }

 private:
  const Token& cur() const { return tokens_[pos_]; }
  const Token& ahead(size_t n) const { return tokens_[std::min(pos_ + n, tokens_.size() - 1)]; }
  bool at(Tok k) const { return cur().kind == k; }
  bool at_keyword(const char* word) const { return at(Tok::Ident) && cur().text == word; }

  [[noreturn]] void fail(const Token& t, const std::string& msg) { throw CompileError(t.loc, msg); }

  Token take() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  Token expect(Tok k, const char* context) {
    if (!at(k)) fail(cur(), fmt::format("expected {} {}, found {}", describe(k), context, describe(cur())));
    return take();
  }

  bool accept(Tok k) {
    if (!at(k)) return false;
    take();
    return true;
  }

  AstLet parse_let() {
    stmt_nodes_ = 0;
    take();  // let
    Token name = expect(Tok::Ident, "after 'let'");
    expect(Tok::Assign, fmt::format("after 'let {}'", name.text).c_str());
    AstLet let{name.text, name.loc, parse_expr(0)};
    return let;
  }

  AstKernel parse_kernel() {
    Token kw = take();
    AstKernel k;
    Token name = expect(Tok::Ident, "after 'kernel'");
    k.name = name.text;
    k.loc = name.loc;
    k.begin_offset = kw.offset;
    k.attrs = parse_attr_list();
    expect(Tok::LBrace, fmt::format("to open the body of kernel '{}'", k.name).c_str());
    while (!at(Tok::RBrace)) {
      if (at(Tok::End)) fail(cur(), fmt::format("expected '}}' to close kernel '{}', found end of file", k.name));
      k.body.push_back(parse_stmt());
    }
    Token close = take();
    k.close_loc = close.loc;
    k.end_offset = close.offset + 1;
    return k;
  }

  // network NAME [(attrs)] { KERNEL [* COUNT] [,] ... }
  AstNetwork parse_network() {
    take();  // network
    AstNetwork n;
    Token name = expect(Tok::Ident, "after 'network'");
    n.name = name.text;
    n.loc = name.loc;
    n.attrs = parse_attr_list();
    expect(Tok::LBrace, fmt::format("to open the body of network '{}'", n.name).c_str());
    while (!at(Tok::RBrace)) {
      if (at(Tok::End)) fail(cur(), fmt::format("expected '}}' to close network '{}', found end of file", n.name));
      Token kernel = expect(Tok::Ident, fmt::format("(a kernel name) in network '{}'", n.name).c_str());
      AstNetworkMember m{kernel.text, kernel.loc, 1, kernel.loc};
      if (accept(Tok::Star)) {
        m.count_loc = cur().loc;
        Token count = take();
        if (count.kind != Tok::Int && count.kind != Tok::Float)
          fail(count, fmt::format("expected how often '{}' runs (a number) after '*', found {}", m.kernel, describe(count)));
        m.count = count.float_value;
      }
      n.members.push_back(m);
      accept(Tok::Comma);
    }
    take();  // }
    return n;
  }

  // [ '(' attr { ',' attr } ')' ]
  std::vector<AstAttr> parse_attr_list() {
    std::vector<AstAttr> attrs;
    if (!accept(Tok::LParen)) return attrs;
    do {
      attrs.push_back(parse_attr());
    } while (accept(Tok::Comma));
    expect(Tok::RParen, "to close the attribute list");
    return attrs;
  }

  AstAttr parse_attr() {
    Token name = expect(Tok::Ident, "as an attribute name");
    expect(Tok::Assign, fmt::format("after attribute '{}'", name.text).c_str());
    AstAttr a;
    a.name = name.text;
    a.loc = name.loc;
    a.value_loc = cur().loc;
    Token v = take();
    switch (v.kind) {
      case Tok::Int: a.kind = AstAttr::Kind::Int; a.int_value = v.int_value; a.float_value = v.float_value; break;
      case Tok::Float: a.kind = AstAttr::Kind::Float; a.float_value = v.float_value; break;
      case Tok::Ident: a.kind = AstAttr::Kind::Ident; break;
      case Tok::String: a.kind = AstAttr::Kind::String; break;
      default: fail(v, fmt::format("expected a number, name or string as the value of '{}', found {}", a.name, describe(v)));
    }
    a.text = v.text;
    return a;
  }

  AstStmt parse_stmt() {
    if (at_keyword("let")) return parse_let();
    stmt_nodes_ = 0;
    Token name = expect(Tok::Ident, "at the start of a statement");
    if (at(Tok::LBracket)) return parse_index_def(name);
    expect(Tok::Assign, fmt::format("or '[' after '{}'", name.text).c_str());
    if ((at_keyword("input") || at_keyword("const")) && ahead(1).kind == Tok::Ident) return parse_decl(name);
    return AstTensorDef{name.text, name.loc, parse_expr(0)};
  }

  AstDecl parse_decl(const Token& name) {
    AstDecl d;
    d.name = name.text;
    d.loc = name.loc;
    d.is_const = take().text == "const";
    Token dtype = take();
    d.dtype = dtype.text;
    d.dtype_loc = dtype.loc;
    d.shape_loc = cur().loc;
    expect(Tok::LBracket, "before the shape");
    do {
      d.shape.push_back(parse_expr(0));
    } while (accept(Tok::Comma));
    expect(Tok::RBracket, "to close the shape");
    return d;
  }

  AstIndexDef parse_index_def(const Token& name) {
    AstIndexDef def;
    def.name = name.text;
    def.loc = name.loc;
    take();  // [
    do {
      Token axis = expect(Tok::Ident, "as an index variable");
      expect(Tok::Colon, fmt::format("and an extent after index variable '{}'", axis.text).c_str());
      def.axes.push_back(AstAxis{axis.text, axis.loc, parse_expr(0)});
    } while (accept(Tok::Comma));
    expect(Tok::RBracket, "to close the index variables");
    expect(Tok::Assign, fmt::format("after the left side of '{}'", def.name).c_str());
    def.value = parse_expr(0);
    return def;
  }

  // ---- Expressions, by precedence climbing ----

  AstExprPtr node(AstExpr::Kind kind, SourceLoc loc) {
    if (++stmt_nodes_ > kMaxStmtNodes)
      fail(cur(), fmt::format("statement too large (more than {} operands and operators)", kMaxStmtNodes));
    auto e = std::make_unique<AstExpr>();
    e->kind = kind;
    e->loc = std::move(loc);
    return e;
  }

  void enter(int depth) {
    if (depth > kMaxExprDepth) fail(cur(), fmt::format("expression nested too deeply (more than {} levels)", kMaxExprDepth));
  }

  AstExprPtr parse_expr(int depth) {
    enter(depth);
    AstExprPtr cond = parse_binary(0, depth);
    if (!at(Tok::Question)) return cond;
    SourceLoc loc = take().loc;
    auto e = node(AstExpr::Kind::Ternary, loc);
    e->operands.push_back(std::move(cond));
    e->operands.push_back(parse_expr(depth + 1));
    expect(Tok::Colon, "in conditional expression");
    e->operands.push_back(parse_expr(depth + 1));
    return e;
  }

  // The precedence level of a binary operator token (0 binds loosest), -1 for other tokens.
  static int level_of(Tok t, AstBinaryOp& op) {
    switch (t) {
      case Tok::OrOr: op = AstBinaryOp::Or; return 0;
      case Tok::AndAnd: op = AstBinaryOp::And; return 1;
      case Tok::EqEq: op = AstBinaryOp::Eq; return 2;
      case Tok::Ne: op = AstBinaryOp::Ne; return 2;
      case Tok::Lt: op = AstBinaryOp::Lt; return 3;
      case Tok::Le: op = AstBinaryOp::Le; return 3;
      case Tok::Gt: op = AstBinaryOp::Gt; return 3;
      case Tok::Ge: op = AstBinaryOp::Ge; return 3;
      case Tok::Plus: op = AstBinaryOp::Add; return 4;
      case Tok::Minus: op = AstBinaryOp::Sub; return 4;
      case Tok::Star: op = AstBinaryOp::Mul; return 5;
      case Tok::Slash: op = AstBinaryOp::Div; return 5;
      case Tok::Percent: op = AstBinaryOp::Mod; return 5;
      default: return -1;
    }
  }

  // Left-associative binary operators of `level` and tighter. A chain grows the tree's depth,
  // so its length counts against the nesting limit too.
  AstExprPtr parse_binary(int level, int depth) {
    if (level == 6) return parse_unary(depth);
    AstExprPtr lhs = parse_binary(level + 1, depth);
    int chain = 0;
    for (;;) {
      AstBinaryOp op = AstBinaryOp::Add;
      if (level_of(cur().kind, op) != level) return lhs;
      enter(depth + ++chain);
      SourceLoc loc = take().loc;
      auto e = node(AstExpr::Kind::Binary, loc);
      e->binary_op = op;
      e->operands.push_back(std::move(lhs));
      e->operands.push_back(parse_binary(level + 1, depth + chain));
      lhs = std::move(e);
    }
  }

  AstExprPtr parse_unary(int depth) {
    enter(depth);
    if (at(Tok::Minus) || at(Tok::Bang)) {
      Token op = take();
      auto e = node(AstExpr::Kind::Unary, op.loc);
      e->unary_op = op.kind == Tok::Minus ? AstUnaryOp::Neg : AstUnaryOp::Not;
      e->operands.push_back(parse_unary(depth + 1));
      return e;
    }
    return parse_primary(depth);
  }

  AstExprPtr parse_primary(int depth) {
    Token t = cur();
    switch (t.kind) {
      case Tok::Int: {
        take();
        auto e = node(AstExpr::Kind::Int, t.loc);
        e->int_value = t.int_value;
        e->float_value = t.float_value;
        return e;
      }
      case Tok::Float: {
        take();
        auto e = node(AstExpr::Kind::Float, t.loc);
        e->float_value = t.float_value;
        return e;
      }
      case Tok::LParen: {
        take();
        AstExprPtr inner = parse_expr(depth + 1);
        expect(Tok::RParen, "to close '('");
        return inner;
      }
      case Tok::Ident: {
        take();
        if (at(Tok::LBracket)) {
          take();
          auto e = node(AstExpr::Kind::Access, t.loc);
          e->name = t.text;
          do {
            e->operands.push_back(parse_expr(depth + 1));
          } while (accept(Tok::Comma));
          expect(Tok::RBracket, fmt::format("to close the index of '{}'", t.text).c_str());
          return e;
        }
        if (at(Tok::LParen)) return parse_call(t, depth);
        auto e = node(AstExpr::Kind::Ident, t.loc);
        e->name = t.text;
        return e;
      }
      default: fail(t, fmt::format("expected an expression, found {}", describe(t)));
    }
  }

  AstExprPtr parse_call(const Token& name, int depth) {
    take();  // (
    auto e = node(AstExpr::Kind::Call, name.loc);
    e->name = name.text;
    if (accept(Tok::RParen)) return e;
    do {
      e->args.push_back(parse_arg(depth + 1));
    } while (accept(Tok::Comma));
    expect(Tok::RParen, fmt::format("to close the arguments of '{}'", name.text).c_str());
    return e;
  }

  AstArg parse_arg(int depth) {
    AstArg arg;
    arg.loc = cur().loc;
    if (at(Tok::Ident) && ahead(1).kind == Tok::Colon) {
      arg.kind = AstArg::Kind::Axis;
      arg.name = take().text;
      take();
      arg.value = parse_expr(depth + 1);
      return arg;
    }
    if (at(Tok::Ident) && ahead(1).kind == Tok::Assign) {
      arg.name = take().text;
      take();
      if (accept(Tok::LBracket)) {
        arg.kind = AstArg::Kind::KeywordList;
        do {
          arg.list.push_back(parse_expr(depth + 1));
        } while (accept(Tok::Comma));
        expect(Tok::RBracket, fmt::format("to close the list of '{}'", arg.name).c_str());
        return arg;
      }
      arg.kind = AstArg::Kind::Keyword;
      arg.value = parse_expr(depth + 1);
      return arg;
    }
    arg.value = parse_expr(depth + 1);
    return arg;
  }

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int stmt_nodes_ = 0;  // expression nodes of the statement being parsed
};

}  // namespace

AstFile parse_file(const std::shared_ptr<const SourceFile>& file) { return Parser(file).run(); }

}  // namespace ansor
