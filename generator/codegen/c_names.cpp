// C identifier sanitisation.
#include "codegen/c_names.h"

#include <algorithm>
#include <cctype>

namespace ansor {

namespace {
constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "_Bool", "_Complex", "_Imaginary", "std", "main", "errno", "assert", "NULL",
    "INFINITY", "NAN", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t"};
}  // namespace

bool is_valid_c_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool is_c_keyword(std::string_view s) { return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords); }

std::string c_identifier(std::string_view name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  // Identifiers starting with "ansor" belong to the runtime and to the code generator's own
  // variables; those starting with "__" to the compiler.
  if (s.rfind("ansor", 0) == 0 || s.rfind("__", 0) == 0) s = "u" + s;
  if (is_c_keyword(s)) s += '_';
  return s;
}

std::string NameTable::unique(std::string_view wanted) {
  std::string base = c_identifier(wanted);
  std::string name = base;
  for (int i = 1; !used_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
  return name;
}

}  // namespace ansor
