// The names visible inside one kernel while it is analysed: `let` constants (the file's and the
// kernel's), tensors, and the index variables of the definition being analysed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "lang/graph_builder.h"
#include "support/diagnostics.h"

namespace ansor {

struct LetConstant {
  int64_t value = 0;
  SourceLoc loc;
};

class Scope {
 public:
  Scope(const std::map<std::string, LetConstant>& globals, GraphBuilder& builder) : globals_(globals), builder_(builder) {}

  const LetConstant* let(const std::string& name) const;
  const IterVar* index_var(const std::string& name) const;
  const TensorRef* tensor(const std::string& name) const { return builder_.lookup(name); }

  // Throws unless `name` is free; `what` says what is being declared ("tensor", "reduction axis").
  void check_new_name(const std::string& name, const SourceLoc& loc, const std::string& what) const;

  void add_let(const std::string& name, LetConstant value) { locals_[name] = value; }
  void add_tensor_loc(const std::string& name, const SourceLoc& loc) { tensor_locs_[name] = loc; }
  void push_index_var(const std::string& name, IterVar var, SourceLoc loc) { index_vars_.push_back({name, std::move(var), std::move(loc)}); }
  void pop_index_vars(size_t count) { index_vars_.resize(index_vars_.size() - count); }
  void clear_index_vars() { index_vars_.clear(); }

  struct IndexVarEntry {
    std::string name;
    IterVar var;
    SourceLoc loc;
  };
  const std::vector<IndexVarEntry>& index_vars() const { return index_vars_; }

 private:
  const std::map<std::string, LetConstant>& globals_;
  GraphBuilder& builder_;
  std::map<std::string, LetConstant> locals_;
  std::map<std::string, SourceLoc> tensor_locs_;
  std::vector<IndexVarEntry> index_vars_;
};

}  // namespace ansor
