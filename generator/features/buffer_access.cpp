// Accesses, touched regions and strides of one store, by interval arithmetic on its indices.
#include "features/buffer_access.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ansor {

namespace {

bool same_tuple(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (!structural_equal(a[d], b[d])) return false;
  return true;
}

void add_tuple(BufferAccess& access, const std::vector<Expr>& indices) {
  for (const std::vector<Expr>& t : access.indices)
    if (same_tuple(t, indices)) return;
  access.indices.push_back(indices);
  access.flat.push_back(flat_index(*access.buffer, indices));
  access.flat_forms.push_back(linearize(access.flat.back()));
}

// The extent of dimension d of the hull of the tuples under `ranges`, at most the buffer's:
// a guarded access may reach past the buffer, never touch more of it.
int64_t hull_extent(const BufferAccess& access, size_t d, const RangeMap& ranges) {
  int64_t size = access.buffer->shape[d];
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const std::vector<Expr>& t : access.indices) {
    Interval r = bound_of(t[d], ranges);
    if (!r.bounded()) return size;
    lo = std::min(lo, r.min);
    hi = std::max(hi, r.max);
  }
  return std::min(hi - lo + 1, size);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

bool BufferAccess::uses(const VarNode* var) const {
  for (const LinearForm& f : flat_forms)
    for (const LinearForm::Term& t : f.terms)
      if (t.atom.get() == var || uses_var(t.atom, var)) return true;
  return false;
}

std::vector<BufferAccess> store_accesses(const LoweredKernel& kernel, const StoreNode& store) {
  std::vector<BufferAccess> accesses;
  auto access_of = [&](const std::string& name, AccessType type) -> BufferAccess& {
    for (BufferAccess& a : accesses) {
      if (a.buffer->name == name) {
        if (a.type != type) a.type = AccessType::ReadWrite;
        return a;
      }
    }
    const Buffer* b = kernel.find_buffer(name);
    if (!b) throw std::invalid_argument(fmt::format("features of kernel '{}': a statement accesses '{}', which is no buffer of the kernel", kernel.name, name));
    accesses.push_back({b, static_cast<int>(b - kernel.buffers.data()), type, {}, {}, {}});
    return accesses.back();
  };
  add_tuple(access_of(store.buffer, AccessType::Write), store.indices);
  for (const LoadNode* l : collect_loads(store.value)) add_tuple(access_of(l->tensor, AccessType::Read), l->indices);
  return accesses;
}

TouchedRegions touched_regions(const std::vector<BufferAccess>& accesses, const std::vector<const ForNode*>& loops) {
  TouchedRegions out;
  size_t n = loops.size();
  out.elements.assign(n + 1, std::vector<double>(accesses.size(), 0.0));
  RangeMap ranges;
  for (const ForNode* f : loops) ranges[f->var.get()] = Interval::point(0);
  for (size_t level = n + 1; level-- > 0;) {
    if (level < n) ranges[loops[level]->var.get()] = Interval::range(loops[level]->extent);
    for (size_t a = 0; a < accesses.size(); ++a) {
      const BufferAccess& access = accesses[a];
      double elements = 1;
      std::vector<int64_t> region;
      for (size_t d = 0; d < access.buffer->shape.size(); ++d) {
        region.push_back(hull_extent(access, d, ranges));
        elements *= static_cast<double>(region.back());
      }
      out.elements[level][a] = elements;
      if (level == 0) out.outermost.push_back(std::move(region));
    }
  }
  return out;
}

int64_t loop_stride(const BufferAccess& access, const ForNode& loop, const std::vector<const ForNode*>& loops) {
  const VarNode* var = loop.var.get();
  int64_t least = INT64_MAX;
  for (size_t t = 0; t < access.flat.size(); ++t) {
    bool linear = true;
    int64_t coef = 0;
    for (const LinearForm::Term& term : access.flat_forms[t].terms) {
      if (term.atom.get() == var) {
        coef = term.coef;
      } else if (uses_var(term.atom, var)) {
        linear = false;
      }
    }
    int64_t stride = std::abs(coef);
    if (!linear) {
      if (loop.extent < 2) continue;
      RangeMap at;
      for (const ForNode* f : loops) at[f->var.get()] = Interval::point(0);
      Interval first = bound_of(access.flat[t], at);
      at[var] = Interval::point(loop.extent - 1);
      Interval last = bound_of(access.flat[t], at);
      if (!first.is_point() || !last.is_point()) continue;
      stride = ceil_div(std::abs(last.min - first.min), loop.extent - 1);
    }
    if (stride != 0) least = std::min(least, stride);
  }
  return least == INT64_MAX ? 0 : least;
}

int64_t contiguous_elements(const Buffer& buffer, const std::vector<int64_t>& region) {
  if (region.empty()) return 1;
  // Dimensions from the smallest stride, the last dimension first among equals (a local buffer
  // may be laid out in its loops' order rather than row-major).
  std::vector<size_t> order(region.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return buffer.strides[a] != buffer.strides[b] ? buffer.strides[a] < buffer.strides[b] : a > b; });
  int64_t run = region[order[0]];
  for (size_t i = 1; i < order.size(); ++i) {
    const size_t inner = order[i - 1], d = order[i];
    bool inner_whole = region[inner] == buffer.shape[inner] && buffer.strides[d] == buffer.strides[inner] * buffer.shape[inner];
    if (!inner_whole) break;
    run *= region[d];
  }
  return run;
}

}  // namespace ansor
