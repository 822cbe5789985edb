// The parser of kernels.def: every statement form of the grammar in docs/language.md becomes the
// expected syntax tree, with the locations errors point at, and expressions group by the
// documented precedence and associativity. Syntax errors are in errors_test.cpp.
#include "lang/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lang_test_util.h"

namespace ansor {
namespace {

using test::source;

std::string show(const AstExpr& e);

std::string show_list(const std::vector<AstExprPtr>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + show(*xs[i]);
  return s;
}

std::string show_arg(const AstArg& a) {
  switch (a.kind) {
    case AstArg::Kind::Positional:
      return show(*a.value);
    case AstArg::Kind::Keyword:
      return a.name + "=" + show(*a.value);
    case AstArg::Kind::KeywordList:
      return a.name + "=[" + show_list(a.list) + "]";
    case AstArg::Kind::Axis:
      return a.name + ":" + show(*a.value);
  }
  return "?";
}

const char* op_text(AstBinaryOp op) {
  switch (op) {
    case AstBinaryOp::Or:
      return "||";
    case AstBinaryOp::And:
      return "&&";
    case AstBinaryOp::Eq:
      return "==";
    case AstBinaryOp::Ne:
      return "!=";
    case AstBinaryOp::Lt:
      return "<";
    case AstBinaryOp::Le:
      return "<=";
    case AstBinaryOp::Gt:
      return ">";
    case AstBinaryOp::Ge:
      return ">=";
    case AstBinaryOp::Add:
      return "+";
    case AstBinaryOp::Sub:
      return "-";
    case AstBinaryOp::Mul:
      return "*";
    case AstBinaryOp::Div:
      return "/";
    case AstBinaryOp::Mod:
      return "%";
  }
  return "?";
}

// Every operation parenthesised, so that a string shows exactly how the tree is grouped.
std::string show(const AstExpr& e) {
  switch (e.kind) {
    case AstExpr::Kind::Int:
      return std::to_string(e.int_value);
    case AstExpr::Kind::Float:
      return format_float(e.float_value);
    case AstExpr::Kind::Ident:
      return e.name;
    case AstExpr::Kind::Access:
      return e.name + "[" + show_list(e.operands) + "]";
    case AstExpr::Kind::Call: {
      std::string s = e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + show_arg(e.args[i]);
      return s + ")";
    }
    case AstExpr::Kind::Unary:
      return std::string("(") + (e.unary_op == AstUnaryOp::Neg ? "-" : "!") + show(*e.operands[0]) + ")";
    case AstExpr::Kind::Binary:
      return "(" + show(*e.operands[0]) + " " + op_text(e.binary_op) + " " + show(*e.operands[1]) + ")";
    case AstExpr::Kind::Ternary:
      return "(" + show(*e.operands[0]) + " ? " + show(*e.operands[1]) + " : " + show(*e.operands[2]) + ")";
  }
  return "?";
}

AstFile parse(const std::string& text) { return parse_file(source(text)); }

// An expression parsed as the value of a global `let` (the parser does not evaluate it).
std::string parse_expr(const std::string& text) {
  AstFile file = parse("let x = " + text);
  return show(*std::get<AstLet>(file.items.at(0)).value);
}

const AstKernel& kernel_of(const AstFile& file, size_t i = 0) { return std::get<AstKernel>(file.items.at(i)); }

TEST(ParserTest, EmptyFileHasNoItems) {
  EXPECT_TRUE(parse("").items.empty());
  EXPECT_TRUE(parse("  # only a comment\n\n").items.empty());
}

TEST(ParserTest, GlobalLetsAndKernelsInFileOrder) {
  AstFile file = parse("let A = 2\nkernel k { X = input f32[A] }\nlet B = A * 3\n");
  ASSERT_EQ(file.items.size(), 3u);
  const auto& a = std::get<AstLet>(file.items[0]);
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.loc.line, 1);
  EXPECT_EQ(a.loc.column, 5);
  EXPECT_EQ(show(*a.value), "2");
  EXPECT_EQ(kernel_of(file, 1).name, "k");
  const auto& b = std::get<AstLet>(file.items[2]);
  EXPECT_EQ(b.name, "B");
  EXPECT_EQ(show(*b.value), "(A * 3)");
}

TEST(ParserTest, KernelLocalLet) {
  AstFile file = parse("kernel k {\n  let H = 4 + 1\n  X = input f32[H]\n}");
  const AstKernel& k = kernel_of(file);
  ASSERT_EQ(k.body.size(), 2u);
  const auto& let = std::get<AstLet>(k.body[0]);
  EXPECT_EQ(let.name, "H");
  EXPECT_EQ(let.loc.line, 2);
  EXPECT_EQ(let.loc.column, 7);
  EXPECT_EQ(show(*let.value), "(4 + 1)");
}

TEST(ParserTest, KernelNameLocationBracesAndOffsets) {
  std::string text = "let N = 1\nkernel my_op {\n  X = input f32[2]\n}\n";
  AstFile file = parse(text);
  const AstKernel& k = kernel_of(file, 1);
  EXPECT_EQ(k.name, "my_op");
  EXPECT_EQ(k.loc.line, 2);
  EXPECT_EQ(k.loc.column, 8);
  EXPECT_EQ(k.close_loc.line, 4);
  EXPECT_EQ(k.close_loc.column, 1);
  EXPECT_EQ(text.substr(k.begin_offset, k.end_offset - k.begin_offset), "kernel my_op {\n  X = input f32[2]\n}");
  EXPECT_TRUE(k.attrs.empty());
}

TEST(ParserTest, AttributesOfEveryValueKind) {
  AstFile file = parse("kernel k (weight = 4, scale = 0.5, target = cuda, flags = \"llvm -mcpu=x\") { }");
  const AstKernel& k = kernel_of(file);
  ASSERT_EQ(k.attrs.size(), 4u);
  EXPECT_EQ(k.attrs[0].name, "weight");
  EXPECT_EQ(k.attrs[0].kind, AstAttr::Kind::Int);
  EXPECT_EQ(k.attrs[0].int_value, 4);
  EXPECT_DOUBLE_EQ(k.attrs[0].float_value, 4.0);
  EXPECT_EQ(k.attrs[0].loc.column, 11);
  EXPECT_EQ(k.attrs[0].value_loc.column, 20);
  EXPECT_EQ(k.attrs[1].kind, AstAttr::Kind::Float);
  EXPECT_DOUBLE_EQ(k.attrs[1].float_value, 0.5);
  EXPECT_EQ(k.attrs[2].kind, AstAttr::Kind::Ident);
  EXPECT_EQ(k.attrs[2].text, "cuda");
  EXPECT_EQ(k.attrs[3].kind, AstAttr::Kind::String);
  EXPECT_EQ(k.attrs[3].text, "llvm -mcpu=x");
  EXPECT_TRUE(k.body.empty());
}

TEST(ParserTest, InputAndConstDeclarationsOfEveryDtype) {
  for (const char* dtype : {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "bool"}) {
    AstFile file = parse(std::string("kernel k {\n  X = input ") + dtype + "[4, N * 2]\n  W = const " + dtype + "[3]\n}");
    const AstKernel& k = kernel_of(file);
    ASSERT_EQ(k.body.size(), 2u);
    const auto& x = std::get<AstDecl>(k.body[0]);
    EXPECT_EQ(x.name, "X");
    EXPECT_FALSE(x.is_const);
    EXPECT_EQ(x.dtype, dtype);
    EXPECT_EQ(x.dtype_loc.column, 13);
    EXPECT_EQ(x.shape_loc.column, 13 + static_cast<int>(std::string(dtype).size()));
    ASSERT_EQ(x.shape.size(), 2u);
    EXPECT_EQ(show(*x.shape[0]), "4");
    EXPECT_EQ(show(*x.shape[1]), "(N * 2)");
    const auto& w = std::get<AstDecl>(k.body[1]);
    EXPECT_TRUE(w.is_const);
    EXPECT_EQ(w.dtype, dtype);
    EXPECT_EQ(w.loc.line, 3);
    EXPECT_EQ(w.loc.column, 3);
  }
}

TEST(ParserTest, IndexFormWithSeveralAxes) {
  AstFile file = parse("kernel k {\n  C[i:M, j:2 * N, b:4] = A[i, j] + b\n}");
  const auto& def = std::get<AstIndexDef>(kernel_of(file).body.at(0));
  EXPECT_EQ(def.name, "C");
  EXPECT_EQ(def.loc.line, 2);
  EXPECT_EQ(def.loc.column, 3);
  ASSERT_EQ(def.axes.size(), 3u);
  EXPECT_EQ(def.axes[0].name, "i");
  EXPECT_EQ(show(*def.axes[0].extent), "M");
  EXPECT_EQ(def.axes[1].name, "j");
  EXPECT_EQ(def.axes[1].loc.column, 10);
  EXPECT_EQ(show(*def.axes[1].extent), "(2 * N)");
  EXPECT_EQ(def.axes[2].name, "b");
  EXPECT_EQ(show(*def.value), "(A[i, j] + b)");
}

TEST(ParserTest, TensorForm) {
  AstFile file = parse("kernel k {\n  R = relu(bias_add(conv2d_nchw(X, W, stride = 1, pad = [1, 2]), b, axis = 1))\n  Y = X\n}");
  const AstKernel& k = kernel_of(file);
  ASSERT_EQ(k.body.size(), 2u);
  const auto& r = std::get<AstTensorDef>(k.body[0]);
  EXPECT_EQ(r.name, "R");
  EXPECT_EQ(show(*r.value), "relu(bias_add(conv2d_nchw(X, W, stride=1, pad=[1, 2]), b, axis=1))");
  EXPECT_EQ(r.value->loc.column, 7);
  const auto& y = std::get<AstTensorDef>(k.body[1]);
  EXPECT_EQ(show(*y.value), "X");
}

TEST(ParserTest, KeywordArgumentsAndListsKeepTheirKindsAndPlaces) {
  AstFile file = parse("let x = f(A, s = 2, p = [1, -2, N], e = 1e-5)");
  const AstExpr& call = *std::get<AstLet>(file.items[0]).value;
  ASSERT_EQ(call.kind, AstExpr::Kind::Call);
  ASSERT_EQ(call.args.size(), 4u);
  EXPECT_EQ(call.args[0].kind, AstArg::Kind::Positional);
  EXPECT_EQ(call.args[1].kind, AstArg::Kind::Keyword);
  EXPECT_EQ(call.args[1].name, "s");
  EXPECT_EQ(call.args[1].loc.column, 14);
  EXPECT_EQ(call.args[2].kind, AstArg::Kind::KeywordList);
  EXPECT_EQ(show_list(call.args[2].list), "1, (-2), N");
  EXPECT_EQ(call.args[3].kind, AstArg::Kind::Keyword);
  EXPECT_EQ(show(*call.args[3].value), "1e-05");
}

TEST(ParserTest, CallsWithoutArguments) { EXPECT_EQ(parse_expr("f() + g(x)"), "(f() + g(x))"); }

TEST(ParserTest, ReductionsWithSeveralAxes) {
  EXPECT_EQ(parse_expr("sum(k:8, r:K * 2, A[i, k] * B[k, r])"), "sum(k:8, r:(K * 2), (A[i, k] * B[k, r]))");
  AstFile file = parse("let x = max(k:4, X[k])");
  const AstExpr& call = *std::get<AstLet>(file.items[0]).value;
  ASSERT_EQ(call.args.size(), 2u);
  EXPECT_EQ(call.args[0].kind, AstArg::Kind::Axis);
  EXPECT_EQ(call.args[0].name, "k");
  EXPECT_EQ(call.args[1].kind, AstArg::Kind::Positional);
}

TEST(ParserTest, ConditionalAndSelect) {
  EXPECT_EQ(parse_expr("h >= 1 && h < 5 ? X[h - 1] : 0.0"), "(((h >= 1) && (h < 5)) ? X[(h - 1)] : 0.0)");
  EXPECT_EQ(parse_expr("select(h >= 1, X[h], 0.0)"), "select((h >= 1), X[h], 0.0)");
  // The conditional groups to the right and takes whole conditionals in both branches.
  EXPECT_EQ(parse_expr("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
  EXPECT_EQ(parse_expr("a ? b ? c : d : e"), "(a ? (b ? c : d) : e)");
  EXPECT_EQ(parse_expr("a || b ? c + 1 : d * 2"), "((a || b) ? (c + 1) : (d * 2))");
}

TEST(ParserTest, PrecedenceOfEveryBinaryOperatorLevel) {
  // From loosest to tightest: || , && , == != , < <= > >= , + - , * / %.
  EXPECT_EQ(parse_expr("a || b && c"), "(a || (b && c))");
  EXPECT_EQ(parse_expr("a && b || c"), "((a && b) || c)");
  EXPECT_EQ(parse_expr("a && b == c"), "(a && (b == c))");
  EXPECT_EQ(parse_expr("a != b && c"), "((a != b) && c)");
  EXPECT_EQ(parse_expr("a == b < c"), "(a == (b < c))");
  EXPECT_EQ(parse_expr("a <= b != c"), "((a <= b) != c)");
  EXPECT_EQ(parse_expr("a > b + c"), "(a > (b + c))");
  EXPECT_EQ(parse_expr("a - b >= c"), "((a - b) >= c)");
  EXPECT_EQ(parse_expr("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(parse_expr("a / b - c"), "((a / b) - c)");
  EXPECT_EQ(parse_expr("a % b + c"), "((a % b) + c)");
  EXPECT_EQ(parse_expr("a || b && c == d < e + f * g"), "(a || (b && (c == (d < (e + (f * g))))))");
  EXPECT_EQ(parse_expr("a * b + c < d == e && f || g"), "((((((a * b) + c) < d) == e) && f) || g)");
}

TEST(ParserTest, EveryBinaryOperatorIsLeftAssociative) {
  for (const char* op : {"||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"}) {
    std::string o = op;
    EXPECT_EQ(parse_expr("a " + o + " b " + o + " c"), "((a " + o + " b) " + o + " c)") << op;
  }
  // Operators of one level mix left to right.
  EXPECT_EQ(parse_expr("a - b + c - d"), "(((a - b) + c) - d)");
  EXPECT_EQ(parse_expr("a / b * c % d"), "(((a / b) * c) % d)");
  EXPECT_EQ(parse_expr("a < b >= c"), "((a < b) >= c)");
}

TEST(ParserTest, UnaryOperatorsBindTighterThanBinaryOnes) {
  EXPECT_EQ(parse_expr("-a * b"), "((-a) * b)");
  EXPECT_EQ(parse_expr("a - -b"), "(a - (-b))");
  EXPECT_EQ(parse_expr("- - a"), "(-(-a))");
  EXPECT_EQ(parse_expr("!a && !(b || c)"), "((!a) && (!(b || c)))");
  EXPECT_EQ(parse_expr("-X[i] + f(x)"), "((-X[i]) + f(x))");
}

TEST(ParserTest, ParenthesesOverridePrecedence) {
  EXPECT_EQ(parse_expr("(a + b) * c"), "((a + b) * c)");
  EXPECT_EQ(parse_expr("a - (b - c)"), "(a - (b - c))");
  EXPECT_EQ(parse_expr("((((a))))"), "a");
}

TEST(ParserTest, AccessWithExpressionIndices) {
  EXPECT_EQ(parse_expr("X[n, c, h * 2 + r, (w - 1) / 2]"), "X[n, c, ((h * 2) + r), ((w - 1) / 2)]");
}

TEST(ParserTest, BinaryExpressionLocationIsTheOperator) {
  AstFile file = parse("let x = a + b * c");
  const AstExpr& sum = *std::get<AstLet>(file.items[0]).value;
  EXPECT_EQ(sum.loc.column, 11);
  EXPECT_EQ(sum.operands[1]->loc.column, 15);
  EXPECT_EQ(sum.operands[0]->loc.column, 9);
}

TEST(ParserTest, WhitespaceNewlinesAndCommentsAreFree) {
  std::string compact = "kernel k{X=input f32[4,4] Y[i:4,j:4]=sum(r:4,X[i,r]*X[r,j])+1.0}";
  std::string spread =
      "# leading comment\n"
      "kernel\n  k   # name\n{\n"
      "\tX =\n input   f32 [ 4 ,\n 4 ]   # shape\n"
      "  Y[ i : 4 ,\n     j : 4 ] =\n"
      "    sum( r:4,   # axis\n"
      "         X[i, r]\n * X[r, j] )\n"
      "    + 1.0\n"
      "}\n";
  AstFile a = parse(compact), b = parse(spread);
  const AstKernel &ka = kernel_of(a), &kb = kernel_of(b);
  ASSERT_EQ(ka.body.size(), 2u);
  ASSERT_EQ(kb.body.size(), 2u);
  EXPECT_EQ(show(*std::get<AstIndexDef>(ka.body[1]).value), show(*std::get<AstIndexDef>(kb.body[1]).value));
  EXPECT_EQ(show(*std::get<AstIndexDef>(kb.body[1]).value), "(sum(r:4, (X[i, r] * X[r, j])) + 1.0)");
  EXPECT_EQ(std::get<AstDecl>(kb.body[0]).loc.line, 5);
  EXPECT_EQ(std::get<AstDecl>(kb.body[0]).loc.column, 2);
}

TEST(ParserTest, StatementsNeedNoSeparators) {
  AstFile file = parse("kernel k { X = input f32[2] Y[i:2] = X[i] Z = relu(Y) let q = 1 }");
  const AstKernel& k = kernel_of(file);
  ASSERT_EQ(k.body.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<AstDecl>(k.body[0]));
  EXPECT_TRUE(std::holds_alternative<AstIndexDef>(k.body[1]));
  EXPECT_TRUE(std::holds_alternative<AstTensorDef>(k.body[2]));
  EXPECT_TRUE(std::holds_alternative<AstLet>(k.body[3]));
}

TEST(ParserTest, InputWithoutADtypeIsAnOrdinaryName) {
  // `input` and `const` are keywords only before a dtype name.
  AstFile file = parse("kernel k { Y = input }");
  const auto& def = std::get<AstTensorDef>(kernel_of(file).body.at(0));
  EXPECT_EQ(show(*def.value), "input");
}

TEST(ParserTest, DeepButBoundedNestingIsAccepted) {
  std::string text = std::string(150, '(') + "a" + std::string(150, ')');
  EXPECT_EQ(parse_expr(text), "a");
  std::string negations = std::string(150, '-') + "a";
  EXPECT_EQ(parse_expr(negations).size(), 150u * 3 + 1);
}

}  // namespace
}  // namespace ansor
