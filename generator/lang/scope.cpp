// Name lookup and the duplicate / shadowing checks of kernels.def.
#include "lang/scope.h"

#include <fmt/format.h>

namespace ansor {

const LetConstant* Scope::let(const std::string& name) const {
  if (auto it = locals_.find(name); it != locals_.end()) return &it->second;
  if (auto it = globals_.find(name); it != globals_.end()) return &it->second;
  return nullptr;
}

const IterVar* Scope::index_var(const std::string& name) const {
  for (auto it = index_vars_.rbegin(); it != index_vars_.rend(); ++it)
    if (it->name == name) return &it->var;
  return nullptr;
}

namespace {
std::string where(const SourceLoc& loc) { return loc.valid() ? fmt::format(" (at line {})", loc.line) : std::string(); }
}  // namespace

void Scope::check_new_name(const std::string& name, const SourceLoc& loc, const std::string& what) const {
  bool shadow = what == "reduction axis";
  auto clash = [&](const std::string& other, const SourceLoc& other_loc) {
    if (shadow) throw CompileError(loc, fmt::format("reduction axis '{}' shadows {} '{}'{}", name, other, name, where(other_loc)));
    throw CompileError(loc, fmt::format("duplicate name '{}': {} '{}' is already defined{}", name, other, name, where(other_loc)));
  };
  for (auto& v : index_vars_)
    if (v.name == name) clash("index variable", v.loc);
  if (auto it = tensor_locs_.find(name); it != tensor_locs_.end()) clash("tensor", it->second);
  if (auto it = locals_.find(name); it != locals_.end()) clash("constant", it->second.loc);
  if (auto it = globals_.find(name); it != globals_.end()) clash("constant", it->second.loc);
}

}  // namespace ansor
