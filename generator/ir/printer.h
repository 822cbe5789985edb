// Printing expressions in the syntax of kernels.def, for error messages, `ansor-gen lower` and
// the canonical text of a DAG.
#pragma once

#include <functional>
#include <string>

#include "ir/expr.h"

namespace ansor {

// How names are printed; the defaults print a variable's or tensor's own name.
struct PrintNames {
  std::function<std::string(const VarNode*)> var;
  std::function<std::string(const std::string&)> tensor;
};

std::string to_string(const Expr& e, const PrintNames& names = {});
// A float literal that reads back as the same double and always looks like a float ("1.0").
std::string format_float(double v);

}  // namespace ansor
