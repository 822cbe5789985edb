// Operations: the nodes of a ComputeDAG. A placeholder is a kernel argument (`input` or
// `const`); a compute operation defines every element of its output by an expression of its
// axes, with a ReduceNode at the top for reductions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace ansor {

enum class OpKind : uint8_t { Placeholder, Compute };

struct Operation {
  std::string name;
  OpKind kind = OpKind::Compute;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool is_const = false;      // a placeholder declared `const` (a weight)
  std::vector<IterVar> axes;  // compute: one per output dimension, extents equal to shape
  Expr body;                  // compute: the value at (axes)

  bool is_placeholder() const { return kind == OpKind::Placeholder; }
  // The reduction at the top of the body, or null.
  const ReduceNode* reduction() const { return body ? body->as<ReduceNode>() : nullptr; }
  // Number of elements of the output.
  int64_t num_elements() const;
};

using OpPtr = std::shared_ptr<const Operation>;

OpPtr make_placeholder(std::string name, DType dtype, std::vector<int64_t> shape, bool is_const);
OpPtr make_compute(std::string name, std::vector<IterVar> axes, Expr body);

// Every tensor an operation reads, each once, in order of first read.
std::vector<std::string> read_tensors(const Operation& op);

}  // namespace ansor
