// Extent and value propagation through split and fuse relations.
#include "schedule/iter_graph.h"

#include <stdexcept>

namespace ansor {

std::vector<int64_t> propagate_extents(const Stage& stage, const std::vector<int64_t>& root_extents) {
  std::vector<int64_t> extents(stage.iters.size(), 1);
  for (int r = 0; r < stage.num_roots; ++r) extents[r] = root_extents[r];
  for (const IterRelation& rel : stage.relations) {
    if (rel.kind == IterRelation::Kind::Split) {
      // Binary splits from the innermost: the inner part takes min(factor, extent). An
      // undecided length (a sketch's) or extent leaves the parts unknown (-1).
      int64_t cur = extents[rel.inputs[0]];
      for (size_t i = rel.factors.size(); i-- > 0;) {
        int64_t f = rel.factors[i];
        bool known = cur > 0 && f > 0;
        extents[rel.outputs[i + 1]] = known ? std::min(f, cur) : -1;
        cur = known ? (cur + f - 1) / f : -1;
      }
      extents[rel.outputs[0]] = cur;
    } else {
      int64_t product = 1;
      for (int i : rel.inputs) product = product < 0 || extents[i] < 0 ? -1 : product * extents[i];
      extents[rel.outputs[0]] = product;
    }
  }
  return extents;
}

void propagate_values(const Stage& stage, const std::vector<int64_t>& extents, std::vector<Expr>& values) {
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    const IterRelation& rel = *it;
    for (int o : rel.outputs)
      if (!values[o]) throw std::logic_error("iterator '" + stage.iters[o].name + "' of '" + stage.op->name + "' has no value");
    if (rel.kind == IterRelation::Kind::Split) {
      Expr v = values[rel.outputs[0]];
      for (size_t i = 0; i < rel.factors.size(); ++i) v = add(mul(v, int_imm(rel.factors[i])), values[rel.outputs[i + 1]]);
      values[rel.inputs[0]] = v;
    } else {
      Expr fused = values[rel.outputs[0]];
      int64_t stride = 1;
      for (size_t i = rel.inputs.size(); i-- > 0;) {
        Expr v = div(fused, int_imm(stride));
        if (i > 0) v = mod(v, int_imm(extents[rel.inputs[i]]));
        values[rel.inputs[i]] = v;
        stride *= extents[rel.inputs[i]];
      }
    }
  }
}

std::vector<bool> reduction_iterators(const Stage& stage) {
  std::vector<bool> reduce(stage.iters.size(), false);
  for (int r = stage.num_spatial_roots(); r < stage.num_roots; ++r) reduce[r] = true;
  for (const IterRelation& rel : stage.relations) {
    bool any = false;
    for (int i : rel.inputs) any = any || reduce[i];
    for (int o : rel.outputs) reduce[o] = any;
  }
  return reduce;
}

}  // namespace ansor
