// The syntax tree of kernels.def, as parsed, before names and shapes are resolved.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "support/diagnostics.h"

namespace ansor {

struct AstExpr;
using AstExprPtr = std::unique_ptr<AstExpr>;

// `name:extent`, an index variable with its extent.
struct AstAxis {
  std::string name;
  SourceLoc loc;
  AstExprPtr extent;
};

// An argument of a call: `expr`, `name = expr`, `name = [1, 2]` or `name:extent`.
struct AstArg {
  enum class Kind { Positional, Keyword, KeywordList, Axis };
  Kind kind = Kind::Positional;
  std::string name;  // keyword or axis name
  SourceLoc loc;
  AstExprPtr value;              // positional or keyword value, or the axis extent
  std::vector<AstExprPtr> list;  // KeywordList elements
};

enum class AstUnaryOp { Neg, Not };
enum class AstBinaryOp { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, Mod };

struct AstExpr {
  enum class Kind { Int, Float, Ident, Access, Call, Unary, Binary, Ternary };
  Kind kind;
  SourceLoc loc;
  std::string name;  // Ident; the tensor of Access; the function of Call
  int64_t int_value = 0;
  double float_value = 0;
  AstUnaryOp unary_op = AstUnaryOp::Neg;
  AstBinaryOp binary_op = AstBinaryOp::Add;
  std::vector<AstExprPtr> operands;  // Access indices; Unary, Binary, Ternary operands
  std::vector<AstArg> args;          // Call arguments
};

struct AstLet {
  std::string name;
  SourceLoc loc;
  AstExprPtr value;
};

// `X = input f32[...]` or `W = const f32[...]`
struct AstDecl {
  std::string name;
  SourceLoc loc;
  bool is_const = false;
  std::string dtype;
  SourceLoc dtype_loc;
  std::vector<AstExprPtr> shape;
  SourceLoc shape_loc;
};

// `C[i:M, j:N] = expr`
struct AstIndexDef {
  std::string name;
  SourceLoc loc;
  std::vector<AstAxis> axes;
  AstExprPtr value;
};

// `R = relu(...)`
struct AstTensorDef {
  std::string name;
  SourceLoc loc;
  AstExprPtr value;
};

using AstStmt = std::variant<AstLet, AstDecl, AstIndexDef, AstTensorDef>;

struct AstAttr {
  enum class Kind { Int, Float, Ident, String };
  std::string name;
  SourceLoc loc;
  Kind kind = Kind::Int;
  std::string text;  // identifier or string contents
  int64_t int_value = 0;
  double float_value = 0;
  SourceLoc value_loc;
};

struct AstKernel {
  std::string name;
  SourceLoc loc;
  std::vector<AstAttr> attrs;
  std::vector<AstStmt> body;
  SourceLoc close_loc;  // the closing brace
  size_t begin_offset = 0, end_offset = 0;  // the kernel's text in the file
};

// One line of a network: a kernel and how often it runs per inference of the network.
struct AstNetworkMember {
  std::string kernel;
  SourceLoc loc;
  double count = 1;
  SourceLoc count_loc;
};

struct AstNetwork {
  std::string name;
  SourceLoc loc;
  std::vector<AstAttr> attrs;
  std::vector<AstNetworkMember> members;
};

using AstItem = std::variant<AstLet, AstKernel, AstNetwork>;

struct AstFile {
  std::shared_ptr<const SourceFile> source;
  std::vector<AstItem> items;
};

}  // namespace ansor
