// ComputeDAG: the operations of one kernel in topological order, with the analyses that the
// search and the build read: producers and consumers, FLOPs, a canonical text that does not
// depend on names or formatting in kernels.def, and the workload key (the hash of that text)
// under which tuning records are filed.
#pragma once

#include <string>
#include <vector>

#include "dag/operation.h"

namespace ansor {

class ComputeDAG {
 public:
  ComputeDAG() = default;
  // ops must be in topological order (every tensor defined before it is read) with unique names.
  explicit ComputeDAG(std::vector<OpPtr> ops);

  const std::vector<OpPtr>& ops() const { return ops_; }
  int num_ops() const { return static_cast<int>(ops_.size()); }
  const Operation& op(int i) const { return *ops_[i]; }
  // The position of the operation with this name, -1 if none.
  int find(const std::string& name) const;

  // The kernel's arguments: placeholders in declaration order, then outputs in definition order.
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  bool is_output(int i) const;
  const std::vector<int>& producers(int i) const { return producers_[i]; }
  const std::vector<int>& consumers(int i) const { return consumers_[i]; }

  // Floating-point operations of one evaluation, every intermediate materialised.
  double flop_count() const { return flops_; }
  const std::string& canonical_text() const { return canonical_; }
  const std::string& workload_key() const { return key_; }

 private:
  std::vector<OpPtr> ops_;
  std::vector<int> inputs_, outputs_;
  std::vector<std::vector<int>> producers_, consumers_;
  double flops_ = 0;
  std::string canonical_, key_;
};

// Floating-point operations of one operation over its whole domain (a multiply-add counts 2).
double count_flops(const Operation& op);

// The canonical text: operations renamed T0, T1, ... in order, index variables renamed by
// position, one operation per line.
std::string canonical_text(const std::vector<OpPtr>& ops, const std::vector<int>& outputs);

// A 128-bit hash of text as 32 hex digits.
std::string hash_hex(const std::string& text);

}  // namespace ansor
