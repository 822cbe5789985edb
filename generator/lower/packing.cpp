// Packing programs for rewritten layouts.
#include "lower/packing.h"

#include <algorithm>

#include "ir/arith.h"

namespace ansor {
namespace {

// Below this many elements a parallel loop costs more than it saves.
constexpr int64_t kParallelPackElements = int64_t{1} << 16;
// Threads per block of a GPU packer.
constexpr int64_t kPackThreads = 256;

// The store of every packed element, one per GPU thread: the coordinates from the thread's
// global index.
Stmt bind_to_gpu_threads(const Stmt& store, const PackedLayout& layout, int64_t elements) {
  const int64_t threads = std::min(kPackThreads, elements);
  Var block = make_var("pack_block"), thread = make_var("pack_thread");
  Expr flat = add(mul(block, int_imm(threads)), thread);
  VarMap coords;
  int64_t stride = 1;
  for (size_t d = layout.coords.size(); d-- > 0;) {
    coords.emplace_back(layout.coords[d].get(), mod(div(flat, int_imm(stride)), int_imm(layout.shape[d])));
    stride *= layout.shape[d];
  }
  Stmt body = substitute(store, coords);
  if (elements % threads != 0) body = make_if(lt(flat, int_imm(elements)), body);
  return make_for(block, (elements + threads - 1) / threads, ForKind::ThreadBinding,
                  make_for(thread, threads, ForKind::ThreadBinding, body, IterAnnotation::ThreadX), IterAnnotation::BlockX);
}

}  // namespace

LoweredKernel lower_packing(const PackedLayout& layout, DType dtype, const std::vector<int64_t>& plain_shape, const std::string& name,
                            bool gpu) {
  LoweredKernel k;
  k.name = name;
  const std::string packed_name = packed_buffer_name(layout.tensor);
  k.buffers.push_back({layout.tensor, dtype, plain_shape, row_major_strides(plain_shape), BufferScope::Param, false, true, {}});
  k.buffers.push_back({packed_name, dtype, layout.shape, row_major_strides(layout.shape), BufferScope::Param, true, false, {}});
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
  if (gpu) {
    k.body = bind_to_gpu_threads(body, layout, k.buffers[1].num_elements());
    return k;
  }
  // A large tensor is packed on every call of the plain entry point: its outermost loop runs on
  // the runtime's threads.
  const bool parallel = k.buffers[1].num_elements() >= kParallelPackElements && !layout.coords.empty() && layout.shape[0] > 1;
  for (size_t d = layout.coords.size(); d-- > 0;)
    body = make_for(layout.coords[d], layout.shape[d], d == 0 && parallel ? ForKind::Parallel : ForKind::Serial, body);
  k.body = body;
  return k;
}

}  // namespace ansor
