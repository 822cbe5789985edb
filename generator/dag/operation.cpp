// Construction helpers for operations.
#include "dag/operation.h"

#include <algorithm>

namespace ansor {

int64_t Operation::num_elements() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

OpPtr make_placeholder(std::string name, DType dtype, std::vector<int64_t> shape, bool is_const) {
  auto op = std::make_shared<Operation>();
  op->name = std::move(name);
  op->kind = OpKind::Placeholder;
  op->dtype = dtype;
  op->shape = std::move(shape);
  op->is_const = is_const;
  return op;
}

OpPtr make_compute(std::string name, std::vector<IterVar> axes, Expr body) {
  auto op = std::make_shared<Operation>();
  op->name = std::move(name);
  op->kind = OpKind::Compute;
  op->dtype = body->dtype;
  for (auto& ax : axes) op->shape.push_back(ax.extent);
  op->axes = std::move(axes);
  op->body = std::move(body);
  return op;
}

std::vector<std::string> read_tensors(const Operation& op) {
  std::vector<std::string> names;
  if (!op.body) return names;
  for (const LoadNode* l : collect_loads(op.body))
    if (std::find(names.begin(), names.end(), l->tensor) == names.end()) names.push_back(l->tensor);
  return names;
}

}  // namespace ansor
