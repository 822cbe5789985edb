// transpose and reshape: pure data movement.
#include <fmt/format.h>

#include <algorithm>

#include "lang/builtins/builtin.h"

namespace ansor {

namespace {

TensorRef transpose(const BuiltinCall& call) {
  call.allow_keywords({"perm"});
  call.expect_tensors(1);
  const TensorRef& x = call.tensor(0);
  int rank = x.rank();
  std::vector<int64_t> perm(rank);
  for (int d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  if (auto given = call.int_list_arg("perm")) perm = *given;
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int>(perm.size()) == rank;
  for (int d = 0; valid && d < rank; ++d) valid = sorted[d] == d;
  if (!valid) call.fail(fmt::format("'perm' of 'transpose' must be a permutation of 0..{} for '{}' of rank {}", rank - 1, x.name, rank));
  std::vector<int64_t> shape(rank);
  for (int d = 0; d < rank; ++d) shape[d] = x.shape[perm[d]];
  auto axes = make_axes(shape);
  std::vector<Expr> idx(rank);
  for (int d = 0; d < rank; ++d) idx[perm[d]] = axes[d].var;
  return call.define("transpose", std::move(axes), load_tensor(x, idx));
}

// numpy reshape: one extent may be -1 and is inferred; elements keep their row-major order.
TensorRef reshape(const BuiltinCall& call) {
  call.allow_keywords({"shape"});
  call.expect_tensors(1);
  const TensorRef& x = call.tensor(0);
  auto given = call.int_list_arg("shape");
  if (!given) call.fail("'reshape' needs the new shape (shape = [...])");
  std::vector<int64_t> shape = *given;
  int64_t total = 1, known = 1;
  for (int64_t e : x.shape) total *= e;
  int inferred = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && inferred < 0) {
      inferred = static_cast<int>(d);
    } else if (shape[d] < 1) {
      call.fail(fmt::format("'shape' of 'reshape' must hold positive extents and at most one -1, given {}", shape_string(shape)));
    } else if (known > kMaxElements / shape[d]) {
      call.fail(fmt::format("shape mismatch in 'reshape': '{}' has {} elements, the shape {} has more than 2^40", x.name, total,
                            shape_string(shape)));
    } else {
      known *= shape[d];
    }
  }
  if (inferred >= 0) {
    if (total % known != 0)
      call.fail(fmt::format("shape mismatch in 'reshape': {} elements cannot be reshaped to {}", total, shape_string(shape)));
    shape[inferred] = total / known;
    known = total;
  }
  if (known != total)
    call.fail(fmt::format("shape mismatch in 'reshape': '{}' has {} elements, the shape {} has {}", x.name, total,
                          shape_string(shape), known));
  auto axes = make_axes(shape);
  Expr flat = int_imm(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = add(mul(flat, int_imm(shape[d])), axes[d].var);
  std::vector<Expr> idx(x.shape.size());
  int64_t stride = 1;
  for (size_t d = x.shape.size(); d-- > 0;) {
    idx[d] = mod(div(flat, int_imm(stride)), int_imm(x.shape[d]));
    stride *= x.shape[d];
  }
  return call.define("reshape", std::move(axes), load_tensor(x, idx));
}

}  // namespace

void register_layout(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("transpose", transpose);
  table.emplace_back("reshape", reshape);
}

}  // namespace ansor
