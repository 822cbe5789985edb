// Every error the kernels.def front end reports (the "Errors" section of docs/language.md and each
// distinct error of the lexer, parser and semantic analysis; built-in argument errors are in
// builtins_test.cpp): a small input that triggers it, the exact line and column it names, and a
// distinctive part of its message. Also the rendered form: `file:line:col: error: message`, the
// source line and a caret under the column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lang_test_util.h"

namespace ansor {
namespace {

using test::fails_at;
using test::load;
using test::source;
using ::testing::HasSubstr;

// A kernel whose body starts on line 2.
std::string in_kernel(const std::string& body) { return "kernel k {\n" + body + "\n}"; }

// Declarations on line 2, the statement under test on line 3.
std::string with_decls(const std::string& stmt) {
  return in_kernel("X = input f32[4]  N = input i32[4]  B = input bool[4]  U = input u8[4]  M = input f32[4, 4]\n" + stmt);
}

CompileError error_of(const std::string& text) {
  try {
    load(text);
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return CompileError(SourceLoc{}, "");
}

// ---- Lexical errors ------------------------------------------------------------------------------

TEST(LexerErrorTest, SingleAmpersandOrBar) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i] > 0.0 & X[i] < 1.0"), 3, 21, "unexpected character '&'; did you mean '&&'?"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i] > 0.0 | X[i] < 1.0"), 3, 21, "unexpected character '|'; did you mean '||'?"));
}

TEST(LexerErrorTest, UnexpectedCharacters) {
  EXPECT_TRUE(fails_at(in_kernel("  X = input f32[4];"), 2, 19, "unexpected character ';'"));
  EXPECT_TRUE(fails_at("let a = 1 @ 2", 1, 11, "unexpected character '@'"));
  EXPECT_TRUE(fails_at("let a = 1.\n.", 2, 1, "unexpected character '.'"));
}

TEST(LexerErrorTest, UnexpectedBytes) {
  EXPECT_TRUE(fails_at("let caf\xc3\xa9 = 1", 1, 8, "unexpected byte 0xc3"));
  EXPECT_TRUE(fails_at(std::string("let a = 1\n\x01"), 2, 1, "unexpected byte 0x01"));
  EXPECT_TRUE(fails_at(std::string("let a\0 = 1", 10), 1, 6, "unexpected byte 0x00"));
}

TEST(LexerErrorTest, MalformedNumbers) {
  EXPECT_TRUE(fails_at("let a = 1e", 1, 9, "malformed number: exponent has no digits"));
  EXPECT_TRUE(fails_at("let a = 2.5E+ 1", 1, 9, "malformed number: exponent has no digits"));
  EXPECT_TRUE(fails_at("let a = 12abc", 1, 9, "malformed number '12a'"));
  EXPECT_TRUE(fails_at("let a = 1.2.3", 1, 9, "malformed number '1.2.'"));
  EXPECT_TRUE(fails_at("let a = 0x10", 1, 9, "malformed number '0x'"));
  EXPECT_TRUE(fails_at("let a = 3_000", 1, 9, "malformed number '3_'"));
}

TEST(LexerErrorTest, NumbersOutOfRange) {
  EXPECT_TRUE(fails_at("let a = 9223372036854775808", 1, 9, "integer '9223372036854775808' is too large"));
  EXPECT_TRUE(fails_at("let a = 99999999999999999999999", 1, 9, "integer '99999999999999999999999' is too large"));
  EXPECT_TRUE(fails_at(in_kernel("Y[i:4] = 1e999"), 2, 10, "number '1e999' is out of range"));
}

TEST(LexerErrorTest, UnterminatedStringPointsAtItsOpeningQuote) {
  EXPECT_TRUE(fails_at("kernel k (target = \"cuda) {\n}", 1, 20, "unterminated string"));
  EXPECT_TRUE(fails_at("kernel k (target = \"cuda", 1, 20, "unterminated string"));
}

TEST(LexerErrorTest, UnknownEscapePointsAtTheEscapedCharacter) {
  EXPECT_TRUE(fails_at("kernel k (target = \"a\\nb\") {}", 1, 23, "unknown escape in string; only \\\" and \\\\ are allowed"));
  EXPECT_TRUE(fails_at("kernel k (target = \"a\\", 1, 23, "unknown escape in string"));
}

// ---- Syntax errors -------------------------------------------------------------------------------

TEST(ParserErrorTest, TopLevelNeedsKernelOrLet) {
  EXPECT_TRUE(fails_at("X = input f32[4]", 1, 1, "expected 'kernel', 'network' or 'let', found 'X'"));
  EXPECT_TRUE(fails_at("kernel k { X = input f32[4]\n Y = relu(X) }\n}", 3, 1, "expected 'kernel', 'network' or 'let', found '}'"));
  EXPECT_TRUE(fails_at("\n  42", 2, 3, "expected 'kernel', 'network' or 'let', found number '42'"));
}

TEST(ParserErrorTest, MalformedLet) {
  EXPECT_TRUE(fails_at("let = 4", 1, 5, "expected a name after 'let', found '='"));
  EXPECT_TRUE(fails_at("let N 4", 1, 7, "expected '=' after 'let N', found number '4'"));
  EXPECT_TRUE(fails_at("let N =", 1, 8, "expected an expression, found end of file"));
}

TEST(ParserErrorTest, MalformedKernelHeader) {
  EXPECT_TRUE(fails_at("kernel { }", 1, 8, "expected a name after 'kernel', found '{'"));
  EXPECT_TRUE(fails_at("kernel k X", 1, 10, "expected '{' to open the body of kernel 'k', found 'X'"));
  EXPECT_TRUE(fails_at("kernel k (weight = 1 {", 1, 22, "expected ')' to close the attribute list, found '{'"));
  EXPECT_TRUE(fails_at("kernel k (weight = 1,) {", 1, 22, "expected a name as an attribute name, found ')'"));
  EXPECT_TRUE(fails_at("kernel k () {", 1, 11, "expected a name as an attribute name, found ')'"));
  EXPECT_TRUE(fails_at("kernel k (weight 1) {", 1, 18, "expected '=' after attribute 'weight', found number '1'"));
}

TEST(ParserErrorTest, AttributeValueMustBeAToken) {
  EXPECT_TRUE(
      fails_at("kernel k (weight = -1) {", 1, 20, "expected a number, name or string as the value of 'weight', found '-'"));
  EXPECT_TRUE(fails_at("kernel k (trials = [1]) {", 1, 20, "as the value of 'trials', found '['"));
}

TEST(ParserErrorTest, UnclosedKernelPointsAtTheEndOfTheFile) {
  EXPECT_TRUE(fails_at("kernel k {\n  X = input f32[4]\n", 3, 1, "expected '}' to close kernel 'k', found end of file"));
}

TEST(ParserErrorTest, MalformedStatements) {
  EXPECT_TRUE(fails_at(in_kernel("  4 = X"), 2, 3, "expected a name at the start of a statement, found number '4'"));
  EXPECT_TRUE(fails_at(in_kernel("  X input f32[4]"), 2, 5, "expected '=' or '[' after 'X', found 'input'"));
  EXPECT_TRUE(fails_at(in_kernel("  X = input f32 4"), 2, 17, "expected '[' before the shape, found number '4'"));
  EXPECT_TRUE(fails_at(in_kernel("  X = input f32[4, 4"), 3, 1, "expected ']' to close the shape, found '}'"));
  EXPECT_TRUE(fails_at(in_kernel("  X = input f32[]"), 2, 17, "expected an expression, found ']'"));
}

TEST(ParserErrorTest, MalformedIndexFormLeftSide) {
  EXPECT_TRUE(fails_at(in_kernel("  Y[4:4] = 1"), 2, 5, "expected a name as an index variable, found number '4'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i 4] = 1"), 2, 7, "expected ':' and an extent after index variable 'i', found number '4'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4 = 1"), 2, 9, "expected ']' to close the index variables, found '='"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] 1"), 2, 10, "expected '=' after the left side of 'Y', found number '1'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[] = 1"), 2, 5, "expected a name as an index variable, found ']'"));
}

TEST(ParserErrorTest, MalformedExpressions) {
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = i > 1 ? 1 2"), 2, 22, "expected ':' in conditional expression, found number '2'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = (i + 1"), 3, 1, "expected ')' to close '(', found '}'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = X[i, 1 + 1"), 3, 1, "expected ']' to close the index of 'X', found '}'"));
  EXPECT_TRUE(
      fails_at(in_kernel("  Y[i:4] = exp(i 2)"), 2, 18, "expected ')' to close the arguments of 'exp', found number '2'"));
  EXPECT_TRUE(
      fails_at(in_kernel("  Y = conv2d_nchw(X, W, pad = [1, 2)"), 2, 36, "expected ']' to close the list of 'pad', found ')'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = \n}"), 3, 1, "expected an expression, found '}'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = 1 + * 2"), 2, 16, "expected an expression, found '*'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y[i:4] = X[]"), 2, 14, "expected an expression, found ']'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y = f(a, )"), 2, 12, "expected an expression, found ')'"));
  EXPECT_TRUE(fails_at(in_kernel("  Y = pad = 1"), 2, 11, "expected a name at the start of a statement, found '='"));
}

// i / first + ... + i / (first + count - 1), parenthesised as a balanced tree: wide but shallow.
std::string balanced_sum(int first, int count) {
  if (count == 1) return "i / " + std::to_string(first);
  int half = count / 2;
  return "(" + balanced_sum(first, half) + " + " + balanced_sum(first + half, count - half) + ")";
}

// Regression: a wide, shallow sum of many distinct index terms took time cubic in its length
// (10 s for 2000 terms); a statement's size is bounded instead.
TEST(ParserErrorTest, StatementTooLarge) {
  CompileError e = error_of(with_decls("Y[i:1000000] = X[" + balanced_sum(2, 300) + " % 4]"));
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_THAT(e.message(), HasSubstr("statement too large (more than 1000 operands and operators)"));
  // Each statement has its own budget.
  std::string many;
  for (int s = 0; s < 5; ++s) many += "Y" + std::to_string(s) + "[i:1000000] = X[" + balanced_sum(2, 200) + " % 4]\n";
  EXPECT_EQ(load(with_decls(many)).kernels.size(), 1u);
  // Shapes count too, which bounds the rank of a tensor.
  std::string shape = "1";
  for (int d = 0; d < 1000; ++d) shape += ", 1";
  EXPECT_THAT(error_of(in_kernel("X = input f32[" + shape + "]")).message(), HasSubstr("statement too large"));
}

TEST(ParserErrorTest, NestingTooDeep) {
  std::string parens = "let a = " + std::string(300, '(') + "1" + std::string(300, ')');
  CompileError e = error_of(parens);
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_THAT(e.message(), HasSubstr("expression nested too deeply (more than 200 levels)"));
  // 200 parentheses are accepted; the error names the first token inside the 201st.
  EXPECT_EQ(e.loc().column, 9 + 201);

  std::string negations = "let a = " + std::string(300, '-') + "1";
  EXPECT_THAT(error_of(negations).message(), HasSubstr("nested too deeply"));

  std::string chain = "let a = 1";
  for (int i = 0; i < 300; ++i) chain += " + 1";
  CompileError c = error_of(chain);
  EXPECT_THAT(c.message(), HasSubstr("nested too deeply"));
  EXPECT_EQ(c.loc().column, 10 + 4 * 200 + 1);
}

// ---- Kernels and attributes -----------------------------------------------------------------------

TEST(SemaErrorTest, NetworkErrorsNameThePlace) {
  const std::string k = "kernel a { X = input f32[4]\n Y = relu(X) }\n";
  EXPECT_TRUE(fails_at(k + "network n { a, b }", 3, 16, "unknown kernel 'b' in network 'n'"));
  EXPECT_TRUE(fails_at(k + "network n { a\n a * 2 }", 4, 2, "kernel 'a' is listed twice in network 'n' (first at line 3)"));
  EXPECT_TRUE(fails_at(k + "network n { a * 0 }", 3, 17, "'a' must run a positive number of times"));
  EXPECT_TRUE(fails_at(k + "network n { a * x }", 3, 17, "expected how often 'a' runs (a number) after '*', found 'x'"));
  EXPECT_TRUE(fails_at(k + "network n { }", 3, 9, "network 'n' names no kernels"));
  EXPECT_TRUE(fails_at(k + "network n { a", 3, 14, "expected '}' to close network 'n', found end of file"));
  EXPECT_TRUE(fails_at(k + "network n (speed = 2) { a }", 3, 12, "unknown network attribute 'speed' (expected latency_ms or reference_ms)"));
  EXPECT_TRUE(fails_at(k + "network n (latency_ms = -1) { a }", 3, 25, "expected a number, name or string as the value of 'latency_ms'"));
  EXPECT_TRUE(fails_at(k + "network n (latency_ms = 0) { a }", 3, 25, "'latency_ms' must be a positive number of milliseconds"));
  EXPECT_TRUE(fails_at(k + "network n (reference_ms = fast) { a }", 3, 27, "'reference_ms' must be a positive number"));
  EXPECT_TRUE(fails_at(k + "network n (latency_ms = 1, latency_ms = 2) { a }", 3, 28, "attribute 'latency_ms' given twice"));
  EXPECT_TRUE(fails_at(k + "network n { a }\nnetwork n { a }", 4, 9, "duplicate network 'n' (first defined at line 3)"));
  EXPECT_TRUE(fails_at(k + "network { a }", 3, 9, "expected a name after 'network', found '{'"));
}

TEST(SemaErrorTest, EmptyKernel) {
  EXPECT_TRUE(fails_at("let N = 1\nkernel nothing { }", 2, 8, "kernel 'nothing' is empty"));
  EXPECT_TRUE(fails_at("kernel k {\n  # just a comment\n}", 1, 8, "kernel 'k' is empty"));
}

TEST(SemaErrorTest, KernelWithoutComputedTensors) {
  EXPECT_TRUE(
      fails_at("kernel k {\n X = input f32[4]\n}", 1, 8, "kernel 'k' defines no tensors; it needs at least one computed output"));
  EXPECT_TRUE(fails_at("kernel k { let a = 1 }", 1, 8, "kernel 'k' defines no tensors"));
}

TEST(SemaErrorTest, DuplicateKernel) {
  EXPECT_TRUE(
      fails_at("kernel k { Y[i:1] = 1 }\n\nkernel   k { Y[i:1] = 2 }", 3, 10, "duplicate kernel 'k' (first defined at line 1)"));
}

TEST(SemaErrorTest, UnknownAttribute) {
  EXPECT_TRUE(fails_at("kernel k (weight = 1, wieght = 2) { Y[i:1] = 1 }", 1, 23,
                       "unknown attribute 'wieght' (expected weight, trials or target)"));
}

TEST(SemaErrorTest, AttributeGivenTwice) {
  EXPECT_TRUE(fails_at("kernel k (trials = 1, trials = 2) { Y[i:1] = 1 }", 1, 23, "attribute 'trials' given twice"));
}

TEST(SemaErrorTest, BadAttributeValues) {
  EXPECT_TRUE(fails_at("kernel k (weight = 0) { Y[i:1] = 1 }", 1, 20, "'weight' must be a positive number"));
  EXPECT_TRUE(fails_at("kernel k (weight = heavy) { Y[i:1] = 1 }", 1, 20, "'weight' must be a positive number"));
  EXPECT_TRUE(fails_at("kernel k (trials = 1.5) { Y[i:1] = 1 }", 1, 20, "'trials' must be a non-negative integer"));
  EXPECT_TRUE(fails_at("kernel k (trials = \"10\") { Y[i:1] = 1 }", 1, 20, "'trials' must be a non-negative integer"));
  EXPECT_TRUE(fails_at("kernel k (target = 1) { Y[i:1] = 1 }", 1, 20, "'target' must be host, cuda or a target string"));
  EXPECT_TRUE(fails_at("kernel k (target = \"\") { Y[i:1] = 1 }", 1, 20, "'target' must be host, cuda or a target string"));
}

// ---- Declarations and extents ---------------------------------------------------------------------

TEST(SemaErrorTest, UnknownDtype) {
  EXPECT_TRUE(fails_at(in_kernel(" X = input f31[4]"), 2, 12,
                       "unknown dtype 'f31' (expected f32, f64, f16, bf16, i8, i16, i32, i64, u8 or bool)"));
  EXPECT_TRUE(fails_at(in_kernel(" W = const float[4]"), 2, 12, "unknown dtype 'float'"));
}

TEST(SemaErrorTest, NonIntegerExtent) {
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4, 2.5]"), 2, 19,
                       "an extent of 'X' must be an integer expression of literals and 'let' constants"));
  EXPECT_TRUE(
      fails_at(in_kernel(" X = input f32[4]\n Z = input f32[X]"), 3, 16, "an extent of 'Z' must be an integer expression"));
  EXPECT_TRUE(fails_at(in_kernel(" Y[i:4, j:i] = 1"), 2, 11, "the extent of 'j' must be an integer expression"));
  EXPECT_TRUE(fails_at(in_kernel(" Y[i:4 < 5] = 1"), 2, 8, "the extent of 'i' must be an integer expression"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[exp(1)]"), 2, 16, "an extent of 'X' must be an integer expression"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[!1]"), 2, 16, "an extent of 'X' must be an integer expression"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n Y[i:4] = sum(k:X[0], X[k])"), 3, 17,
                       "the extent of 'k' must be an integer expression"));
  EXPECT_TRUE(fails_at("let a = 1.5", 1, 9, "the value of 'a' must be an integer expression"));
}

TEST(SemaErrorTest, NonPositiveExtent) {
  // A binary expression is located at its operator.
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4, 2 - 2]"), 2, 21, "an extent of 'X' must be positive, given 0"));
  EXPECT_TRUE(fails_at(in_kernel(" Y[i:-3] = 1"), 2, 6, "the extent of 'i' must be positive, given -3"));
  EXPECT_TRUE(
      fails_at(in_kernel(" X = input f32[4]\n Y[i:4] = sum(k:0, X[k])"), 3, 17, "the extent of 'k' must be positive, given 0"));
}

TEST(SemaErrorTest, TensorTooLarge) {
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[1048576, 1048577]"), 2, 2, "tensor 'X' is too large (more than 2^40 elements)"));
  EXPECT_TRUE(fails_at(in_kernel(" Y[i:1048576, j:1048576, k:2] = 1"), 2, 2, "tensor 'Y' is too large"));
}

TEST(SemaErrorTest, ConstantArithmetic) {
  EXPECT_TRUE(fails_at("let a = 9223372036854775807 + 1", 1, 29, "integer overflow"));
  EXPECT_TRUE(fails_at("let a = 0 - 9223372036854775807 - 2", 1, 33, "integer overflow"));
  EXPECT_TRUE(fails_at("let a = 4294967296 * 4294967296", 1, 20, "integer overflow"));
  EXPECT_TRUE(fails_at("let a = -9223372036854775807 - 1\nlet b = -a", 2, 9, "integer overflow"));
  EXPECT_TRUE(fails_at("let a = -9223372036854775807 - 1\nlet b = a / -1", 2, 11, "integer overflow"));
  EXPECT_TRUE(fails_at("let a = 4 / (2 - 2)", 1, 16, "division by zero"));
  EXPECT_TRUE(fails_at("let a = 4 % 0", 1, 13, "division by zero"));
}

// ---- Names ---------------------------------------------------------------------------------------

TEST(SemaErrorTest, UnknownNames) {
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[Q]"), 2, 16, "unknown name 'Q'"));
  EXPECT_TRUE(fails_at("kernel k { X = input f32[N]\n Y = relu(X) }\nlet N = 4", 1, 26, "unknown name 'N'"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[j]"), 3, 12, "unknown name 'j'"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i] * scale"), 3, 17, "unknown name 'scale'"));
}

TEST(SemaErrorTest, UnknownTensors) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:4, Wt[i, k])"), 3, 19, "unknown tensor 'Wt'"));
  EXPECT_TRUE(fails_at(with_decls("Y = relu(Xs)"), 3, 10, "unknown tensor 'Xs'"));
  EXPECT_TRUE(fails_at(with_decls("Y = Z"), 3, 5, "unknown tensor 'Z'"));
}

TEST(SemaErrorTest, DuplicateNames) {
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n X = const f32[4]"), 3, 2,
                       "duplicate name 'X': tensor 'X' is already defined (at line 2)"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n X[i:4] = 1"), 3, 2, "duplicate name 'X': tensor 'X'"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n X = relu(X)"), 3, 2, "duplicate name 'X': tensor 'X'"));
  EXPECT_TRUE(fails_at("let N = 4\nkernel k {\n N = input f32[4] }", 3, 2,
                       "duplicate name 'N': constant 'N' is already defined (at line 1)"));
  EXPECT_TRUE(fails_at("let N = 4\nlet N = 5", 2, 5, "duplicate name 'N': constant 'N' is already defined (at line 1)"));
  EXPECT_TRUE(fails_at("let N = 4\nkernel k {\n let N = 5 }", 3, 6, "duplicate name 'N': constant 'N'"));
  EXPECT_TRUE(
      fails_at(in_kernel(" let a = 1\n let a = 2"), 3, 6, "duplicate name 'a': constant 'a' is already defined (at line 2)"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n let X = 1"), 3, 6, "duplicate name 'X': tensor 'X'"));
  EXPECT_TRUE(
      fails_at(in_kernel(" Y[i:4, i:4] = 1"), 2, 9, "duplicate name 'i': index variable 'i' is already defined (at line 2)"));
  EXPECT_TRUE(fails_at(in_kernel(" X = input f32[4]\n Y[X:4] = 1"), 3, 4, "duplicate name 'X': tensor 'X'"));
  EXPECT_TRUE(fails_at("let i = 2\nkernel k {\n Y[i:4] = 1 }", 3, 4, "duplicate name 'i': constant 'i'"));
}

TEST(SemaErrorTest, ReductionAxisShadowing) {
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4] = sum(i:4, X[i])"), 3, 14, "reduction axis 'i' shadows index variable 'i' (at line 3)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(X:4, X[i])"), 3, 14, "reduction axis 'X' shadows tensor 'X' (at line 2)"));
  EXPECT_TRUE(fails_at("let K = 4\n" + with_decls("Y[i:4] = sum(K:4, X[K])"), 4, 14,
                       "reduction axis 'K' shadows constant 'K' (at line 1)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:4, M[i, k] * max(k:4, M[k, i]))"), 3, 33,
                       "reduction axis 'k' shadows index variable 'k' (at line 3)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:4, r:2, k:4, M[i, k])"), 3, 24, "reduction axis 'k' appears twice"));
}

TEST(SemaErrorTest, NamesUsedAsTheWrongKind) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X + 1.0"), 3, 10, "tensor 'X' must be indexed here, as X[...]"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = i[0]"), 3, 10, "'i' is not a tensor and cannot be indexed"));
  EXPECT_TRUE(fails_at("let K = 2\n" + with_decls("Y[i:4] = K[i]"), 4, 10, "'K' is not a tensor and cannot be indexed"));
}

// ---- Accesses ------------------------------------------------------------------------------------

TEST(SemaErrorTest, RankMismatch) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = M[i]"), 3, 10, "rank mismatch: 'M' has rank 2 but is indexed with 1 index"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i, 0, 1]"), 3, 10, "rank mismatch: 'X' has rank 1 but is indexed with 3 indexes"));
}

TEST(SemaErrorTest, IndexOfTheWrongType) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = M[i, f32(i)]"), 3, 15, "index 2 of 'M' must be an integer, found a f32 value"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i * 0.5]"), 3, 14, "index 1 of 'X' must be an integer, found a f64 value"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i < 2]"), 3, 14, "index 1 of 'X' must be an integer, found a bool value"));
}

TEST(SemaErrorTest, IndexDependingOnTensorValues) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[N[i] % 4]"), 3, 17, "index 1 of 'X' depends on tensor values"));
}

TEST(SemaErrorTest, IndexThatCanGoOutOfBounds) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i + 1]"), 3, 14,
                       "index 1 of 'X' can go out of bounds: it ranges over [1, 4] but the extent is 4"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:5] = X[i]"), 3, 12, "it ranges over [0, 4] but the extent is 4"));
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4, j:4] = M[i, j - 1]"), 3, 22, "index 2 of 'M' can go out of bounds: it ranges over [-1, 2]"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:8, X[k / 2] + X[k])"), 3, 32, "it ranges over [0, 7] but the extent is 4"));
  // A select only helps in the branch its condition guards.
  EXPECT_TRUE(fails_at(with_decls("Y[i:5] = select(i < 4, 0.0, X[i])"), 3, 31, "it ranges over [4, 4]"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i * 4611686018427387904 * 4]"), 3, 36, "it ranges over an unbounded range"));
  // Regressions (found with the sanitizer build of the fuzz target): these overflowed while
  // their bounds were computed.
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[(i * 4611686018427387904) / 4611686018427387905 / 4]"), 3, 60,
                       "it ranges over an unbounded range"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = select(i > 0, X[i + 9223372036854775806], 0.0)"), 3, 28,
                       "it ranges over an unbounded range"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = select(i < 0, 0.0, X[(i - 9223372036854775807) / 3])"), 3, 57,
                       "index 1 of 'X' can go out of bounds: it ranges over [-3074457345618258603, -3074457345618258602]"));
}

// Regression (found with the sanitizer build of the fuzz target): integer literals combined in
// an index wrapped around (undefined behaviour) instead of being reported.
TEST(SemaErrorTest, OverflowOfLiteralsInExpressions) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:1] = X[9223372036854775807 + 1]"), 3, 32, "integer overflow"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:1] = X[-(-9223372036854775807 - 1)]"), 3, 12, "integer overflow"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:1] = N[i] * (4294967296 * 4294967296)"), 3, 29, "integer overflow"));
}

// ---- Calls and reductions -------------------------------------------------------------------------

TEST(SemaErrorTest, SelectConditionMustBeACondition) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = select(X[i], 1.0, 0.0)"), 3, 17,
                       "the condition of select must be a comparison or a bool value"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = i ? 1.0 : 0.0"), 3, 10, "the condition of select must be a comparison"));
}

TEST(SemaErrorTest, SelectArity) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = select(i < 2, 1.0)"), 3, 10,
                       "'select' takes 3 arguments: select(condition, value if true, value if false)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = select(i < 2, 1.0, f = 0.0)"), 3, 10, "'select' takes 3 arguments"));
}

TEST(SemaErrorTest, NamedArgumentsOfScalarFunctions) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = exp(x = X[i])"), 3, 14, "'exp' takes no named arguments"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = max(X[i], other = 0.0)"), 3, 20, "'max' takes no named arguments"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = f32(v = i)"), 3, 14, "'f32' takes no named arguments"));
}

TEST(SemaErrorTest, AxesOnANonReduction) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = relu(k:4, X[k])"), 3, 10,
                       "'relu' is not a reduction; reductions are sum, max, min and prod"));
}

TEST(SemaErrorTest, ReductionWithoutAxes) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(X[i])"), 3, 10, "'sum' needs reduction axes first: sum(k:extent, expression)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = prod(X[i], X[i])"), 3, 10, "'prod' needs reduction axes first"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = max(X[i])"), 3, 10,
                       "'max' takes 2 values, or reduction axes and a value: max(k:extent, expression)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = min(X[i], X[i], X[i])"), 3, 10, "'min' takes 2 values"));
}

TEST(SemaErrorTest, ReductionWithoutABody) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:4)"), 3, 10,
                       "'sum' needs reduction axes and then the reduced expression: sum(k:extent, expression)"));
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4] = sum(X[i], k:4)"), 3, 10, "'sum' needs reduction axes and then the reduced expression"));
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4] = sum(k:4, X[k], e = 1)"), 3, 10, "needs reduction axes and then the reduced expression"));
}

TEST(SemaErrorTest, ReductionAxesMustComeFirst) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sum(k:4, X[k], X[i])"), 3, 19,
                       "expected a reduction axis (name:extent) in 'sum'; the reduced expression comes last"));
}

TEST(SemaErrorTest, ReductionOfConditions) {
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4] = sum(k:4, X[k] > 0.0)"), 3, 19, "'sum' needs numbers; convert the condition with i32(...)"));
}

TEST(SemaErrorTest, CastArity) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = f32(i, i)"), 3, 10, "'f32' takes 1 argument"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = i64()"), 3, 10, "'i64' takes 1 argument"));
}

TEST(SemaErrorTest, MathFunctionArity) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = exp(X[i], X[i])"), 3, 10, "'exp' takes 1 argument, given 2"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = pow(X[i])"), 3, 10, "'pow' takes 2 arguments, given 1"));
}

TEST(SemaErrorTest, MathFunctionOfAnInteger) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = exp(N[i])"), 3, 14,
                       "'exp' needs a floating-point argument, found i32; convert it with f32(...)"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = sqrt(X[i] > 0.0)"), 3, 20, "'sqrt' needs a number, found a condition"));
}

TEST(SemaErrorTest, TensorOperatorInIndexForm) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4, j:4] = matmul(M, M)"), 3, 15,
                       "'matmul' is a tensor operator; use it in tensor form, as in Y = matmul(...)"));
}

TEST(SemaErrorTest, UnknownFunction) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i] + sin(X[i])"), 3, 17, "unknown function 'sin'"));
}

// ---- Dtypes --------------------------------------------------------------------------------------

TEST(SemaErrorTest, MixedDtypes) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i] + N[i]"), 3, 15,
                       "operands of '+' have different dtypes, f32 and i32; convert one with f32(...)"));
  EXPECT_TRUE(
      fails_at(with_decls("Y[i:4] = select(i < 2, X[i], N[i])"), 3, 10, "operands of select have different dtypes, f32 and i32"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = max(N[i], X[i])"), 3, 10, "operands of 'max' have different dtypes, i32 and f32"));
}

TEST(SemaErrorTest, FloatLiteralInAnIntegerContext) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] + 1.5"), 3, 17,
                       "floating-point value used where i32 is expected in '+'; convert it with i32(...)"));
}

TEST(SemaErrorTest, IntegerLiteralThatDoesNotFitItsContext) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] - 9223372036854775807"), 3, 17, "integer 9223372036854775807 does not fit i32 in '-'"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] + 2147483648"), 3, 17, "integer 2147483648 does not fit i32 in '+'"));
}

TEST(SemaErrorTest, NumberWhereAConditionIsExpected) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = B[i] == 1"), 3, 18, "number used where a condition is expected in '=='"));
}

TEST(SemaErrorTest, ConditionWhereANumberIsExpected) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = (i < 2) + 1"), 3, 13, "'+' needs a number, found a condition"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = -B[i]"), 3, 11, "'-' needs a number, found a condition"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = max(B[i], B[i])"), 3, 14, "'max' needs a number, found a condition"));
}

TEST(SemaErrorTest, NumberWhereLogicExpectsACondition) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = i < 2 && X[i]"), 3, 19, "'&&' needs a condition, found a f32 value"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] || B[i]"), 3, 10, "'||' needs a condition, found a i32 value"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = !X[i]"), 3, 11, "'!' needs a condition, found a f32 value"));
}

TEST(SemaErrorTest, NegatingAnUnsignedValue) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = -U[i]"), 3, 10, "cannot negate an unsigned u8 value"));
}

TEST(SemaErrorTest, IntegerDivisionByZero) {
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] / 0"), 3, 17, "division by zero"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = N[i] % (2 - 2)"), 3, 20, "division by zero"));
  EXPECT_TRUE(fails_at(with_decls("Y[i:4] = X[i % 0]"), 3, 16, "division by zero"));
}

// ---- Tensor form ---------------------------------------------------------------------------------

TEST(SemaErrorTest, TensorFormOfAScalar) {
  EXPECT_TRUE(
      fails_at(with_decls("Y = 1.0 + 2.0"), 3, 9, "the right side of 'Y' is a scalar; tensor form needs a tensor operand"));
  EXPECT_TRUE(fails_at("let K = 3\n" + with_decls("Y = K"), 4, 5, "the right side of 'Y' is a scalar"));
}

TEST(SemaErrorTest, IndexingInTensorForm) {
  EXPECT_TRUE(fails_at(with_decls("Y = relu(X[0])"), 3, 10, "indexing 'X' needs index form: write Y[i:..., ...] = X[...]"));
}

TEST(SemaErrorTest, ReductionInTensorForm) {
  EXPECT_TRUE(
      fails_at(with_decls("Y = sum(k:4, X[k])"), 3, 5, "reductions need index form: write Y[i:..., ...] = sum(k:extent, ...)"));
}

TEST(SemaErrorTest, UnknownOperatorInTensorForm) {
  EXPECT_TRUE(fails_at(with_decls("Y = convolve(X, X)"), 3, 5, "unknown operator 'convolve'"));
}

TEST(SemaErrorTest, TensorFormOperatorErrorsNameTheOperator) {
  EXPECT_TRUE(fails_at(with_decls("Y = X + N"), 3, 7, "operands of '+' have different dtypes, f32 and i32"));
  EXPECT_TRUE(fails_at(with_decls("Y = -U"), 3, 5, "cannot negate an unsigned u8 value"));
}

// ---- Rendering -----------------------------------------------------------------------------------

TEST(RenderTest, NamesFileLineColumnAndShowsACaret) {
  CompileError e = error_of("kernel k {\n  X = input f32[4]\n  Y[i:4] = Wt[i]\n}\n");
  EXPECT_EQ(e.render(),
            "test.def:3:12: error: unknown tensor 'Wt'\n"
            "  Y[i:4] = Wt[i]\n"
            "           ^");
}

TEST(RenderTest, KeepsTabsSoThatTheCaretLinesUp) {
  CompileError e = error_of("kernel k {\n\tX = input f32[4]\n\tY[i:4] =\tWt[i]\n}\n");
  EXPECT_EQ(e.loc().column, 11);
  EXPECT_EQ(e.render(),
            "test.def:3:11: error: unknown tensor 'Wt'\n"
            "\tY[i:4] =\tWt[i]\n"
            "\t        \t^");
}

TEST(RenderTest, LineOfAWindowsFileHasNoCarriageReturn) {
  CompileError e = error_of("let a = 1\r\nlet b = c\r\n");
  EXPECT_EQ(e.render(), "test.def:2:9: error: unknown name 'c'\nlet b = c\n        ^");
}

TEST(RenderTest, LoneCarriageReturnsBreakLines) {
  CompileError e = error_of("let a = 1\rlet b = c\r");
  EXPECT_EQ(e.render(), "test.def:2:9: error: unknown name 'c'\nlet b = c\n        ^");
}

// Found by the parser fuzzer: a file ending in a comment and a lone "\r" had its end-of-file error
// placed past the end of a line the renderer had cut the "\r" from.
TEST(RenderTest, ErrorAfterACommentThatEndsAtACarriageReturn) {
  CompileError e = error_of("kernel o# comment\r");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_EQ(e.loc().file->line_count(), 2);
  EXPECT_THAT(e.render(), HasSubstr("test.def:2:1: error:"));
  EXPECT_THAT(e.render(), HasSubstr("found end of file\n\n^"));
}

TEST(RenderTest, ErrorAtTheEndOfTheFile) {
  CompileError e = error_of("kernel k {\n  X = input f32[4]\n");
  EXPECT_EQ(e.render(), "test.def:3:1: error: expected '}' to close kernel 'k', found end of file\n\n^");
  CompileError last = error_of("let a =");
  EXPECT_EQ(last.render(), "test.def:1:8: error: expected an expression, found end of file\nlet a =\n       ^");
}

TEST(RenderTest, ErrorWithoutPosition) {
  EXPECT_EQ(CompileError(SourceLoc{}, "cannot read 'x.def'").render(), "error: cannot read 'x.def'");
}

TEST(RenderTest, CaretIsClampedToTheLine) {
  SourceLoc loc{source("ab\ncd"), 1, 40};
  EXPECT_EQ(CompileError(loc, "m").render(), "test.def:1:40: error: m\nab\n  ^");
}

}  // namespace
}  // namespace ansor
