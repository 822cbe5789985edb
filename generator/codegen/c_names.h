// C identifiers for names from kernels.def and schedules: sanitised, never a C or C++ keyword,
// unique within a scope.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace ansor {

bool is_valid_c_identifier(std::string_view s);
bool is_c_keyword(std::string_view s);
// Invalid characters become '_'; keywords get a trailing '_'; names the runtime or the compiler
// reserve get a leading 'u'.
std::string c_identifier(std::string_view name);

// Hands out distinct identifiers within one scope.
class NameTable {
 public:
  std::string unique(std::string_view wanted);

 private:
  std::set<std::string> used_;
};

}  // namespace ansor
