// Readable text of a loop program, in the style of TVM's lowered IR, for `ansor-gen lower`,
// `ansor-gen sketch` and for people debugging schedules.
#pragma once

#include <string>

#include "lower/lowered_kernel.h"

namespace ansor {

std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const LoweredKernel& k);

}  // namespace ansor
