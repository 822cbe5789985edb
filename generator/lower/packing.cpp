// Packing programs for rewritten layouts.
#include "lower/packing.h"

#include "ir/arith.h"

namespace ansor {
namespace {

// Below this many elements a parallel loop costs more than it saves.
constexpr int64_t kParallelPackElements = int64_t{1} << 16;

}  // namespace

LoweredKernel lower_packing(const PackedLayout& layout, DType dtype, const std::vector<int64_t>& plain_shape, const std::string& name) {
  LoweredKernel k;
  k.name = name;
  std::string packed_name = layout.tensor + ".packed";
  k.buffers.push_back({layout.tensor, dtype, plain_shape, row_major_strides(plain_shape), BufferScope::Param, false, true});
  k.buffers.push_back({packed_name, dtype, layout.shape, row_major_strides(layout.shape), BufferScope::Param, true, false});
  k.params = {0, 1};
  RangeMap ranges;
  for (size_t d = 0; d < layout.coords.size(); ++d) ranges[layout.coords[d].get()] = Interval::range(layout.shape[d]);
  Expr inside;
  std::vector<Expr> source;
  for (size_t d = 0; d < layout.source_index.size(); ++d) {
    Expr i = simplify(layout.source_index[d], ranges);
    source.push_back(i);
    for (Expr c : {ge(i, int_imm(0)), lt(i, int_imm(plain_shape[d]))}) {
      c = simplify(c, ranges);
      if (!is_const_int(c, 1)) inside = inside ? logical_and(inside, c) : c;
    }
  }
  Expr value = load(layout.tensor, dtype, source);
  if (inside) value = select(inside, value, make_const(dtype, 0));
  Stmt body = make_store(packed_name, std::vector<Expr>(layout.coords.begin(), layout.coords.end()), value);
  // A large tensor is packed on every call of the plain entry point: its outermost loop runs on
  // the runtime's threads.
  const bool parallel = k.buffers[1].num_elements() >= kParallelPackElements && !layout.coords.empty() && layout.shape[0] > 1;
  for (size_t d = layout.coords.size(); d-- > 0;)
    body = make_for(layout.coords[d], layout.shape[d], d == 0 && parallel ? ForKind::Parallel : ForKind::Serial, body);
  k.body = body;
  return k;
}

}  // namespace ansor
