// Quoting for CMake.
#include "backend/cmake_text.h"

namespace ansor {

namespace {

std::string cmake_quoted(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\' || c == '"' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string cmake_set(const std::string& name, const std::vector<std::string>& values) {
  std::string out = "set(" + name;
  for (const std::string& v : values) out += " " + cmake_quoted(v);
  return out + ")\n";
}

}  // namespace ansor
