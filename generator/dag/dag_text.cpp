// Canonical DAG text back to a ComputeDAG: the parser over the lexer's tokens into the syntax
// tree, typed into expressions by the typer, and the checks that the text is the DAG's own.
#include "dag/dag_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>

#include "dag/dag_text_lexer.h"
#include "dag/dag_text_typer.h"

namespace ansor {

namespace {

using namespace dag_text;

// Deeper expressions are refused: the typing pass and every later visitor recurse.
constexpr int kMaxDepth = 500;
// The extent of one dimension and the elements of one tensor, as kernels.def bounds them.
constexpr int64_t kMaxElements = int64_t{1} << 40;

std::optional<BinaryOp> infix_op(const Token& t) {
  if (t.kind != TokenKind::Punct) return std::nullopt;
#define BINARY_OP(Enum, symbol, category, precedence) \
  if (BinaryOp::Enum != BinaryOp::Min && BinaryOp::Enum != BinaryOp::Max && t.text == symbol) return BinaryOp::Enum;
#include "ir/binary_op.def"
  return std::nullopt;
}

std::optional<MathFn> math_fn(const std::string& name) {
#define MATH_FUNCTION(Enum, spelling, arity, accepts_int) \
  if (name == spelling) return MathFn::Enum;
#include "ir/math_function.def"
  return std::nullopt;
}

std::optional<ReduceOp> reduce_op(const std::string& name) {
#define REDUCE_OP(Enum, spelling) \
  if (name == spelling) return ReduceOp::Enum;
#include "ir/reduce_op.def"
  return std::nullopt;
}

// "T3" -> 3, "i0" with prefix 'i' -> 0; null for other names.
std::optional<int> numbered(const std::string& name, char prefix) {
  if (name.size() < 2 || name[0] != prefix) return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), n);
  if (ec != std::errc() || end != name.data() + name.size() || std::to_string(n) != name.substr(1)) return std::nullopt;
  return n;
}

// ---- Parser ------------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ErrorReporter& errors) : tokens_(std::move(tokens)), errors_(errors) {}

  // Operations up to the outputs line; the outputs as written, with the token of the line.
  std::vector<OpPtr> parse_operations();
  std::vector<int> parse_outputs(Token& where);

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_punct(std::string_view p, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Punct && peek(ahead).text == p;
  }
  const Token& expect_punct(std::string_view p) {
    if (!at_punct(p)) errors_.fail(peek(), fmt::format("expected '{}', found {}", p, describe(peek())));
    return next();
  }
  const Token& expect(TokenKind kind, const char* what) {
    if (peek().kind != kind) errors_.fail(peek(), fmt::format("expected {}, found {}", what, describe(peek())));
    return next();
  }
  int64_t parse_extent();
  DType parse_dtype(const Token& t);
  // A tensor name defined by an earlier line.
  int tensor_index(const Token& t);

  OpPtr parse_placeholder(const std::string& name);
  OpPtr parse_compute(const std::string& name);

  SyntaxPtr parse_expr(int min_precedence);
  SyntaxPtr parse_unary();
  SyntaxPtr parse_atom();
  SyntaxPtr parse_call(const Token& name);
  SyntaxPtr parse_reduce(const Token& name, ReduceOp op);
  std::vector<SyntaxPtr> parse_arguments();
  SyntaxPtr make(SyntaxKind kind, const Token& at, std::vector<SyntaxPtr> children = {});

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const ErrorReporter& errors_;
  std::vector<OpPtr> ops_;
  std::map<std::string, Var> vars_;  // of the operation being parsed
  int reduce_vars_ = 0;
  int nesting_ = 0;  // of parse_unary calls
};

int64_t Parser::parse_extent() {
  const Token& t = expect(TokenKind::Int, "an extent");
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || end != t.text.data() + t.text.size() || v < 1 || v > kMaxElements)
    errors_.fail(t, fmt::format("extent {} is out of range [1, {}]", t.text, kMaxElements));
  return v;
}

DType Parser::parse_dtype(const Token& t) {
  std::optional<DType> d = t.kind == TokenKind::Ident ? ansor::parse_dtype(t.text) : std::nullopt;
  if (!d) errors_.fail(t, fmt::format("expected a dtype, found {}", describe(t)));
  return *d;
}

int Parser::tensor_index(const Token& t) {
  std::optional<int> n = numbered(t.text, 'T');
  if (!n || *n >= static_cast<int>(ops_.size())) errors_.fail(t, fmt::format("'{}' is not a tensor defined above", t.text));
  return *n;
}

std::vector<OpPtr> Parser::parse_operations() {
  while (!(peek().kind == TokenKind::Ident && peek().text == "outputs")) {
    const Token& name = peek();
    std::string expected = "T" + std::to_string(ops_.size());
    if (name.kind != TokenKind::Ident || name.text != expected)
      errors_.fail(name, fmt::format("expected '{}' or 'outputs', found {}", expected, describe(name)));
    next();
    ops_.push_back(at_punct("=") ? parse_placeholder(expected) : parse_compute(expected));
    expect(TokenKind::Newline, "the end of the line");
  }
  return ops_;
}

OpPtr Parser::parse_placeholder(const std::string& name) {
  expect_punct("=");
  const Token& kind = expect(TokenKind::Ident, "'input' or 'const'");
  if (kind.text != "input" && kind.text != "const")
    errors_.fail(kind, fmt::format("expected 'input' or 'const', found {}", describe(kind)));
  DType dtype = parse_dtype(next());
  expect_punct("[");
  std::vector<int64_t> shape;
  int64_t elements = 1;
  while (!at_punct("]")) {
    if (!shape.empty()) expect_punct(",");
    const Token& extent = peek();
    shape.push_back(parse_extent());
    if (elements > kMaxElements / shape.back())
      errors_.fail(extent, fmt::format("'{}' has more than {} elements", name, kMaxElements));
    elements *= shape.back();
  }
  next();
  return make_placeholder(name, dtype, std::move(shape), kind.text == "const");
}

OpPtr Parser::parse_compute(const std::string& name) {
  vars_.clear();
  reduce_vars_ = 0;
  expect_punct("[");
  std::vector<IterVar> axes;
  int64_t elements = 1;
  while (!at_punct("]")) {
    if (!axes.empty()) expect_punct(",");
    const Token& v = expect(TokenKind::Ident, "an axis");
    std::string expected = "i" + std::to_string(axes.size());
    if (v.text != expected) errors_.fail(v, fmt::format("expected axis '{}', found {}", expected, describe(v)));
    expect_punct(":");
    const Token& extent = peek();
    IterVar axis{make_var(expected), parse_extent()};
    if (elements > kMaxElements / axis.extent)
      errors_.fail(extent, fmt::format("'{}' has more than {} elements", name, kMaxElements));
    elements *= axis.extent;
    vars_[expected] = axis.var;
    axes.push_back(axis);
  }
  next();
  expect_punct("=");
  const Token& dtype_token = peek();
  DType dtype = parse_dtype(next());
  expect_punct("(");
  SyntaxPtr body = parse_expr(0);
  expect_punct(")");
  Expr built = Typer(errors_).build(*body, dtype);
  if (built->dtype != dtype)
    errors_.fail(dtype_token,
                 fmt::format("'{}' is declared {} but its value is {}", name, dtype_name(dtype), dtype_name(built->dtype)));
  return make_compute(name, std::move(axes), std::move(built));
}

SyntaxPtr Parser::make(SyntaxKind kind, const Token& at, std::vector<SyntaxPtr> children) {
  auto s = std::make_unique<Syntax>();
  s->kind = kind;
  s->line = at.line;
  s->column = at.column;
  for (const SyntaxPtr& c : children) s->depth = std::max(s->depth, c->depth + 1);
  if (s->depth > kMaxDepth) errors_.fail(at, fmt::format("expression nested deeper than {}", kMaxDepth));
  s->children = std::move(children);
  return s;
}

// Precedence climbing over the binary operators' precedences, left-associative: the printer
// parenthesises a left operand that binds looser than its operator and a right operand that
// does not bind tighter, so this reads back the tree it printed.
SyntaxPtr Parser::parse_expr(int min_precedence) {
  SyntaxPtr lhs = parse_unary();
  while (std::optional<BinaryOp> op = infix_op(peek())) {
    int precedence = binary_op_precedence(*op);
    if (precedence < min_precedence) break;
    const Token& at = next();
    SyntaxPtr rhs = parse_expr(precedence + 1);
    std::vector<SyntaxPtr> operands;
    operands.push_back(std::move(lhs));
    operands.push_back(std::move(rhs));
    lhs = make(SyntaxKind::Binary, at, std::move(operands));
    lhs->binary_op = *op;
    const Syntax& a = *lhs->children[0];
    const Syntax& b = *lhs->children[1];
    if (is_comparison(*op) || is_logical(*op)) {
      lhs->type = DType::Bool;
    } else {
      lhs->type = a.type ? a.type : b.type;
    }
  }
  return lhs;
}

SyntaxPtr Parser::parse_unary() {
  // Every nested construct passes here: bound the recursion before it exhausts the stack.
  struct Nesting {
    int& depth;
    ~Nesting() { --depth; }
  } nesting{++nesting_};
  if (nesting_ > kMaxDepth) errors_.fail(peek(), fmt::format("expression nested deeper than {}", kMaxDepth));
  if (at_punct("-")) {
    const Token& minus = next();
    // A negative literal is one literal (builders fold the negation of a literal).
    if (peek().kind == TokenKind::Int) {
      const Token& t = next();
      SyntaxPtr s = make(SyntaxKind::Int, minus);
      std::string digits = "-" + t.text;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), s->int_value);
      if (ec != std::errc() || end != digits.data() + digits.size())
        errors_.fail(t, fmt::format("integer {} is out of range", digits));
      return s;
    }
    SyntaxPtr operand = parse_unary();
    if (operand->kind == SyntaxKind::Float) {
      operand->float_value = -operand->float_value;
      operand->column = minus.column;
      return operand;
    }
    std::optional<DType> type = operand->type;
    std::vector<SyntaxPtr> children;
    children.push_back(std::move(operand));
    SyntaxPtr s = make(SyntaxKind::Neg, minus, std::move(children));
    s->type = type;
    return s;
  }
  if (at_punct("!")) {
    const Token& bang = next();
    std::vector<SyntaxPtr> children;
    children.push_back(parse_unary());
    SyntaxPtr s = make(SyntaxKind::Not, bang, std::move(children));
    s->type = DType::Bool;
    return s;
  }
  return parse_atom();
}

SyntaxPtr Parser::parse_atom() {
  const Token& t = next();
  switch (t.kind) {
    case TokenKind::Int: {
      SyntaxPtr s = make(SyntaxKind::Int, t);
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), s->int_value);
      if (ec != std::errc() || end != t.text.data() + t.text.size())
        errors_.fail(t, fmt::format("integer {} is out of range", t.text));
      return s;
    }
    case TokenKind::Float: {
      SyntaxPtr s = make(SyntaxKind::Float, t);
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), s->float_value);
      if (ec != std::errc() || end != t.text.data() + t.text.size())
        errors_.fail(t, fmt::format("float {} is out of range", t.text));
      return s;
    }
    case TokenKind::Punct:
      if (t.text == "(") {
        SyntaxPtr inner = parse_expr(0);
        expect_punct(")");
        return inner;
      }
      break;
    case TokenKind::Ident: {
      if (t.text == "true" || t.text == "false") {
        SyntaxPtr s = make(SyntaxKind::Bool, t);
        s->int_value = t.text == "true";
        s->type = DType::Bool;
        return s;
      }
      if (t.text == "nan" || t.text == "inf") {
        SyntaxPtr s = make(SyntaxKind::Float, t);
        s->float_value = t.text == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
        return s;
      }
      if (at_punct("(")) return parse_call(t);
      if (at_punct("[")) {
        const Operation& tensor = *ops_[tensor_index(t)];
        next();
        std::vector<SyntaxPtr> indices;
        while (!at_punct("]")) {
          if (!indices.empty()) expect_punct(",");
          indices.push_back(parse_expr(0));
        }
        next();
        if (indices.size() != tensor.shape.size())
          errors_.fail(t, fmt::format("'{}' has {} dimensions, indexed by {}", t.text, tensor.shape.size(), indices.size()));
        SyntaxPtr s = make(SyntaxKind::Load, t, std::move(indices));
        s->tensor = t.text;
        s->dtype = tensor.dtype;
        s->type = tensor.dtype;
        return s;
      }
      auto var = vars_.find(t.text);
      if (var == vars_.end()) errors_.fail(t, fmt::format("'{}' is not a variable in scope", t.text));
      SyntaxPtr s = make(SyntaxKind::Var, t);
      s->var = var->second;
      s->type = var->second->dtype;
      return s;
    }
    default:
      break;
  }
  errors_.fail(t, fmt::format("expected an expression, found {}", describe(t)));
}

std::vector<SyntaxPtr> Parser::parse_arguments() {
  std::vector<SyntaxPtr> args;
  while (!at_punct(")")) {
    if (!args.empty()) expect_punct(",");
    args.push_back(parse_expr(0));
  }
  next();
  return args;
}

SyntaxPtr Parser::parse_call(const Token& name) {
  next();  // (
  std::optional<ReduceOp> reduction = reduce_op(name.text);
  // A reduction names its axes first (`sum(r0:16, ...)`); min and max of two values do not.
  bool names_axis = peek().kind == TokenKind::Ident && at_punct(":", 1);
  if (reduction && (names_axis || (name.text != "min" && name.text != "max"))) return parse_reduce(name, *reduction);
  std::vector<SyntaxPtr> args = parse_arguments();
  auto count_error = [&](size_t n) {
    if (args.size() != n)
      errors_.fail(name, fmt::format("'{}' takes {} argument{}, given {}", name.text, n, n == 1 ? "" : "s", args.size()));
  };
  if (name.text == "min" || name.text == "max") {
    count_error(2);
    std::optional<DType> type = args[0]->type ? args[0]->type : args[1]->type;
    SyntaxPtr s = make(SyntaxKind::Binary, name, std::move(args));
    s->binary_op = name.text == "min" ? BinaryOp::Min : BinaryOp::Max;
    s->type = type;
    return s;
  }
  if (name.text == "select") {
    count_error(3);
    std::optional<DType> type = args[1]->type ? args[1]->type : args[2]->type;
    SyntaxPtr s = make(SyntaxKind::Select, name, std::move(args));
    s->type = type;
    return s;
  }
  if (std::optional<MathFn> fn = math_fn(name.text)) {
    count_error(static_cast<size_t>(math_fn_arity(*fn)));
    std::optional<DType> type;
    for (const SyntaxPtr& a : args)
      if (!type) type = a->type;
    SyntaxPtr s = make(SyntaxKind::Call, name, std::move(args));
    s->fn = *fn;
    s->type = type;
    return s;
  }
  if (std::optional<DType> target = ansor::parse_dtype(name.text)) {
    count_error(1);
    SyntaxPtr s = make(SyntaxKind::Cast, name, std::move(args));
    s->dtype = *target;
    s->type = *target;
    return s;
  }
  errors_.fail(name, fmt::format("unknown function '{}'", name.text));
}

// `op(r0:e0, r1:e1, source)` or `op(..., source, where = condition)`; reduction variables are
// numbered in order through the whole body, as the printer numbers them.
SyntaxPtr Parser::parse_reduce(const Token& name, ReduceOp op) {
  std::vector<IterVar> axes;
  while (peek().kind == TokenKind::Ident && at_punct(":", 1)) {
    const Token& v = next();
    std::string expected = "r" + std::to_string(reduce_vars_);
    if (v.text != expected) errors_.fail(v, fmt::format("expected reduction variable '{}', found {}", expected, describe(v)));
    next();
    IterVar axis{make_var(expected), parse_extent()};
    if (!vars_.emplace(expected, axis.var).second) errors_.fail(v, fmt::format("'{}' is defined twice", expected));
    ++reduce_vars_;
    axes.push_back(axis);
    expect_punct(",");
  }
  std::vector<SyntaxPtr> children;
  children.push_back(parse_expr(0));
  if (at_punct(",")) {
    next();
    const Token& where = expect(TokenKind::Ident, "'where'");
    if (where.text != "where") errors_.fail(where, fmt::format("expected 'where', found {}", describe(where)));
    expect_punct("=");
    children.push_back(parse_expr(0));
  }
  expect_punct(")");
  std::optional<DType> type = children[0]->type;
  SyntaxPtr s = make(SyntaxKind::Reduce, name, std::move(children));
  s->reduce_op = op;
  s->axes = std::move(axes);
  s->type = type;
  return s;
}

std::vector<int> Parser::parse_outputs(Token& where) {
  where = next();  // outputs
  std::vector<int> outputs;
  while (peek().kind != TokenKind::Newline) {
    if (!outputs.empty()) expect_punct(",");
    outputs.push_back(tensor_index(expect(TokenKind::Ident, "a tensor")));
  }
  next();
  if (peek().kind != TokenKind::End)
    errors_.fail(peek(), fmt::format("expected the end of the text after the outputs, found {}", describe(peek())));
  return outputs;
}

std::string tensor_list(const std::vector<int>& tensors) {
  std::vector<std::string> names;
  for (int t : tensors) names.push_back("T" + std::to_string(t));
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

ComputeDAG parse_canonical_dag(std::string_view text, const std::string& source_name) {
  auto file = std::make_shared<SourceFile>();
  file->path = source_name;
  file->text = std::string(text);
  ErrorReporter errors(file);
  Parser parser(lex(file->text, errors), errors);
  std::vector<OpPtr> ops = parser.parse_operations();
  Token outputs_line;
  std::vector<int> outputs = parser.parse_outputs(outputs_line);
  ComputeDAG dag(std::move(ops));
  if (dag.outputs() != outputs)
    errors.fail(outputs_line, fmt::format("the outputs are {} (the operations no other reads), not {}",
                                          tensor_list(dag.outputs()), tensor_list(outputs)));
  // Spacing, redundant parentheses and the like would give another text, hence another
  // workload key: such text is refused rather than filed under a key it does not hash to.
  const std::string& canonical = dag.canonical_text();
  if (canonical != file->text) {
    size_t at = 0;
    while (at < canonical.size() && at < file->text.size() && canonical[at] == file->text[at]) ++at;
    size_t line_start = file->text.rfind('\n', at == 0 ? 0 : at - 1);
    line_start = line_start == std::string::npos || at == 0 ? 0 : line_start + 1;
    size_t line_end = canonical.find('\n', line_start);
    int line =
        1 + static_cast<int>(std::count(file->text.begin(), file->text.begin() + static_cast<std::ptrdiff_t>(line_start), '\n'));
    errors.fail(
        line, static_cast<int>(at - line_start) + 1,
        fmt::format("not in canonical form; the canonical line is '{}'", canonical.substr(line_start, line_end - line_start)));
  }
  return dag;
}

}  // namespace ansor