// The lexer of kernels.def: every token kind, literal values, and the line, column and offset
// that every later error message relies on. Lexical errors are in errors_test.cpp.
#include "lang/lexer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lang_test_util.h"

namespace ansor {
namespace {

using test::source;

std::vector<Tok> kinds_of(const std::string& text) {
  std::vector<Tok> kinds;
  for (const Token& t : tokenize(source(text))) kinds.push_back(t.kind);
  return kinds;
}

TEST(LexerTest, RecognisesEveryPunctuatorAndOperator) {
  EXPECT_EQ(kinds_of("( ) [ ] { } , : = ?"),
            (std::vector<Tok>{Tok::LParen, Tok::RParen, Tok::LBracket, Tok::RBracket, Tok::LBrace, Tok::RBrace, Tok::Comma,
                              Tok::Colon, Tok::Assign, Tok::Question, Tok::End}));
  EXPECT_EQ(kinds_of("+ - * / % < <= > >= == != && || !"),
            (std::vector<Tok>{Tok::Plus, Tok::Minus, Tok::Star, Tok::Slash, Tok::Percent, Tok::Lt, Tok::Le, Tok::Gt, Tok::Ge,
                              Tok::EqEq, Tok::Ne, Tok::AndAnd, Tok::OrOr, Tok::Bang, Tok::End}));
}

TEST(LexerTest, TwoCharacterOperatorsNeedNoSpaces) {
  EXPECT_EQ(kinds_of("a<=b>=c==d!=e&&f||!g=h<i>j"),
            (std::vector<Tok>{Tok::Ident,  Tok::Le,    Tok::Ident,  Tok::Ge,    Tok::Ident, Tok::EqEq,  Tok::Ident,
                              Tok::Ne,     Tok::Ident, Tok::AndAnd, Tok::Ident, Tok::OrOr,  Tok::Bang,  Tok::Ident,
                              Tok::Assign, Tok::Ident, Tok::Lt,     Tok::Ident, Tok::Gt,    Tok::Ident, Tok::End}));
  // `===` is `==` then `=`; `!!` two negations.
  EXPECT_EQ(kinds_of("===!!"), (std::vector<Tok>{Tok::EqEq, Tok::Assign, Tok::Bang, Tok::Bang, Tok::End}));
}

TEST(LexerTest, IdentifiersTakeLettersDigitsAndUnderscores) {
  auto tokens = tokenize(source("_x1 conv2d_nchw X__Y9 kernel"));
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].text, "_x1");
  EXPECT_EQ(tokens[1].text, "conv2d_nchw");
  EXPECT_EQ(tokens[2].text, "X__Y9");
  EXPECT_EQ(tokens[3].kind, Tok::Ident);  // keywords are identifiers to the lexer
  EXPECT_EQ(tokens[3].text, "kernel");
}

TEST(LexerTest, IntegerLiteralsCarryTheirValue) {
  auto tokens = tokenize(source("0 42 007 9223372036854775807"));
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[0].kind, Tok::Int);
  EXPECT_EQ(tokens[0].int_value, 0);
  EXPECT_EQ(tokens[1].int_value, 42);
  EXPECT_DOUBLE_EQ(tokens[1].float_value, 42.0);
  EXPECT_EQ(tokens[2].int_value, 7);
  EXPECT_EQ(tokens[2].text, "007");
  EXPECT_EQ(tokens[3].int_value, INT64_MAX);
}

TEST(LexerTest, FloatLiteralsInEveryForm) {
  auto tokens = tokenize(source("1.5 .25 3. 1e3 2E-2 4.5e+1"));
  ASSERT_EQ(tokens.size(), 7u);
  std::vector<double> expected = {1.5, 0.25, 3.0, 1000.0, 0.02, 45.0};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tokens[i].kind, Tok::Float) << tokens[i].text;
    EXPECT_DOUBLE_EQ(tokens[i].float_value, expected[i]) << tokens[i].text;
  }
  EXPECT_EQ(tokens[4].text, "2E-2");
}

TEST(LexerTest, MinusIsAnOperatorNotPartOfANumber) {
  auto tokens = tokenize(source("-1 x-2"));
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[0].kind, Tok::Minus);
  EXPECT_EQ(tokens[1].int_value, 1);
  EXPECT_EQ(tokens[3].kind, Tok::Minus);
  EXPECT_EQ(tokens[4].int_value, 2);
}

TEST(LexerTest, StringsHoldTheirContentsWithEscapesResolved) {
  auto tokens = tokenize(source(R"("llvm -mcpu=x" "a\"b\\c" "")"));
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].kind, Tok::String);
  EXPECT_EQ(tokens[0].text, "llvm -mcpu=x");
  EXPECT_EQ(tokens[1].text, "a\"b\\c");
  EXPECT_EQ(tokens[2].text, "");
  EXPECT_EQ(tokens[2].offset, 25u);
}

TEST(LexerTest, CommentsAndWhitespaceAreSkipped) {
  auto tokens = tokenize(source("# a comment ( [\n\t x # trailing\r\n\f\v y#z\n"));
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0].text, "x");
  EXPECT_EQ(tokens[1].text, "y");
  EXPECT_EQ(tokens[2].kind, Tok::End);
}

TEST(LexerTest, EmptyAndCommentOnlyFilesHaveJustTheEnd) {
  EXPECT_EQ(kinds_of(""), std::vector<Tok>{Tok::End});
  EXPECT_EQ(kinds_of("# nothing here"), std::vector<Tok>{Tok::End});
}

TEST(LexerTest, TracksLinesColumnsAndOffsets) {
  auto tokens = tokenize(source("let N = 4\n  kernel\tk {\r\n}"));
  ASSERT_EQ(tokens.size(), 9u);
  struct Expected {
    const char* text;
    int line, column;
    size_t offset;
  };
  std::vector<Expected> expected = {{"let", 1, 1, 0},     {"N", 1, 5, 4},   {"=", 1, 7, 6},   {"4", 1, 9, 8},
                                    {"kernel", 2, 3, 12}, {"k", 2, 10, 19}, {"{", 2, 12, 21}, {"}", 3, 1, 24}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tokens[i].text, expected[i].text);
    EXPECT_EQ(tokens[i].loc.line, expected[i].line) << expected[i].text;
    EXPECT_EQ(tokens[i].loc.column, expected[i].column) << expected[i].text;
    EXPECT_EQ(tokens[i].offset, expected[i].offset) << expected[i].text;
    EXPECT_EQ(tokens[i].loc.file->path, "test.def");
  }
}

TEST(LexerTest, EveryLineBreakConventionCountsOnce) {
  // "\n", "\r\n" and a lone "\r" each end one line; a comment ends at any of them.
  auto tokens = tokenize(source("a\nb\r\nc\rd # comment\re\r\rf"));
  ASSERT_EQ(tokens.size(), 7u);
  const int lines[] = {1, 2, 3, 4, 5, 7};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(tokens[i].loc.line, lines[i]) << tokens[i].text;
    EXPECT_EQ(tokens[i].loc.column, 1) << tokens[i].text;
  }
}

TEST(LexerTest, StringsEndAtALoneCarriageReturn) {
  EXPECT_THROW(tokenize(source("\"abc\rdef\"")), CompileError);
}

TEST(LexerTest, EndTokenSitsAfterTheLastCharacter) {
  auto tokens = tokenize(source("x\n  "));
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[1].kind, Tok::End);
  EXPECT_EQ(tokens[1].loc.line, 2);
  EXPECT_EQ(tokens[1].loc.column, 3);
  EXPECT_EQ(tokens[1].offset, 4u);
}

TEST(LexerTest, DescribesTokensForMessages) {
  auto tokens = tokenize(source("name 12 1.5 \"s\" ("));
  EXPECT_EQ(describe(tokens[0]), "'name'");
  EXPECT_EQ(describe(tokens[1]), "number '12'");
  EXPECT_EQ(describe(tokens[2]), "number '1.5'");
  EXPECT_EQ(describe(tokens[3]), "string \"s\"");
  EXPECT_EQ(describe(tokens[4]), "'('");
  EXPECT_EQ(describe(tokens[5]), "end of file");
  EXPECT_EQ(describe(Tok::Ident), "a name");
  EXPECT_EQ(describe(Tok::Int), "an integer");
  EXPECT_EQ(describe(Tok::OrOr), "'||'");
}

}  // namespace
}  // namespace ansor
