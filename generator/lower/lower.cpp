// State to loop program: loop nests over the bounds the schedule layer infers, guards,
// reductions, packed layouts, then the passes that decide the rest.
#include "lower/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "ir/arith.h"
#include "lower/codegen_decisions.h"
#include "lower/gpu_sync.h"
#include "lower/loop_passes.h"
#include "lower/packing.h"

namespace ansor {

namespace {

ForKind for_kind_of(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::None: return ForKind::Serial;
    case IterAnnotation::Unroll: return ForKind::Unrolled;
    case IterAnnotation::Vectorize: return ForKind::Vectorized;
    case IterAnnotation::Parallel: return ForKind::Parallel;
    case IterAnnotation::Tensorize: return ForKind::Tensorized;
    default: return ForKind::ThreadBinding;
  }
}

class Lowerer {
 public:
  explicit Lowerer(const State& state) : state_(state), nest_(state) {}

  LoweredKernel build_kernel() {
    LoweredKernel k;
    plan_packed_layouts(k);
    make_buffers(k);
    std::vector<Stmt> body;
    for (int s = 0; s < state_.num_stages(); ++s)
      if (info(s).computed && state_.stage(s).location == ComputeLocation::Root) body.push_back(build(s));
    k.body = make_seq(std::move(body));
    k.auto_unroll_max_steps = std::move(unroll_steps_);
    for (int s = 0; s < state_.num_stages(); ++s)
      if (info(s).computed) add_memory_hints(k, s);
    return k;
  }

 private:
  const StageBounds& info(int s) const { return nest_.stage(s); }
  const std::string& name_of(int s) const { return state_.stage(s).op->name; }

  void make_buffers(LoweredKernel& k) {
    const ComputeDAG& dag = state_.dag();
    auto param = [&](int op_index, bool output) {
      const Operation& op = dag.op(op_index);
      Buffer b{op.name, op.dtype, op.shape, row_major_strides(op.shape), BufferScope::Param, output, op.is_const, {}};
      if (const PackedLayout* p = k.find_packed(op.name)) {
        b.shape = p->shape;
        b.strides = row_major_strides(p->shape);
      }
      k.params.push_back(static_cast<int>(k.buffers.size()));
      k.buffers.push_back(std::move(b));
    };
    for (int i : dag.inputs()) param(i, false);
    for (int o : dag.outputs()) param(o, true);
    for (const PackedLayout& p : k.packed_in_kernel) {
      const DType dtype = state_.stage(state_.find_stage(p.tensor)).op->dtype;
      k.buffers.push_back({p.buffer, dtype, p.shape, row_major_strides(p.shape), BufferScope::Workspace, false, false, {}});
    }
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (!info(s).computed || state_.is_kernel_output(s)) continue;
      Buffer b;
      b.name = st.op->name;
      b.dtype = st.op->dtype;
      b.shape = info(s).region_extent;
      b.scope = !info(s).local ? BufferScope::Workspace : st.scope == MemoryScope::Shared ? BufferScope::Shared : BufferScope::Local;
      b.strides = b.scope == BufferScope::Local ? loop_order_strides(s, b.shape) : aligned_strides(st, b.shape);
      k.buffers.push_back(std::move(b));
    }
  }

  // A local buffer (a tile's accumulators, a row's partial results) is laid out in the order of
  // its stage's loops: the dimension whose innermost loop runs innermost is contiguous, so that
  // the innermost loop, vectorised, updates consecutive elements whichever axis the schedule put
  // last (output channels in an NCHW convolution's tile, say).
  std::vector<int64_t> loop_order_strides(int s, const std::vector<int64_t>& shape) const {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    const int dims = static_cast<int>(shape.size());
    std::vector<int> innermost_loop(dims, -1);
    for (int d = 0; d < dims; ++d)
      for (size_t p = 0; p < st.leaves.size(); ++p)
        if (uses_var(in.offsets[d], in.vars[st.leaves[p]].get())) innermost_loop[d] = static_cast<int>(p);
    std::vector<int> order(dims);  // outermost first; ties keep the dimensions' order
    for (int d = 0; d < dims; ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return innermost_loop[a] < innermost_loop[b]; });
    std::vector<int64_t> strides(dims, 1);
    int64_t stride = 1;
    for (int i = dims - 1; i >= 0; --i) {
      strides[order[i]] = stride;
      stride *= shape[order[i]];
    }
    return strides;
  }

  static std::vector<int64_t> aligned_strides(const Stage& st, const std::vector<int64_t>& shape) {
    std::vector<int64_t> strides = row_major_strides(shape);
    if (st.align_dim < 0 || st.align_dim >= static_cast<int>(shape.size()) || st.align_factor <= 0) return strides;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (d + 1 < static_cast<int>(shape.size())) strides[d] = strides[d + 1] * shape[d + 1];
      if (d == st.align_dim) {
        int64_t f = st.align_factor, o = ((st.align_offset % f) + f) % f;
        while (strides[d] % f != o) ++strides[d];
      }
    }
    return strides;
  }

  // A part (loop / divisor) % modulus of a loop (modulus 0: no modulo).
  struct LoopPart {
    int64_t divisor = 1;
    int64_t modulus = 0;
    bool operator==(const LoopPart& o) const { return divisor == o.divisor && modulus == o.modulus; }
  };

  // The parts of loop v that an index reads, outermost first, when it reads v only through
  // parts that are digits of v in a mixed radix (a fused loop some of whose loops do not index
  // the tensor); otherwise one part, the whole loop.
  static std::vector<LoopPart> parts_read_by(const std::vector<Expr>& index, const VarNode* v) {
    auto is_v = [v](const Expr& e) { return e->as<VarNode>() == v; };
    auto divided_v = [&](const Expr& e) -> std::optional<int64_t> {
      if (is_v(e)) return 1;
      auto* b = e->as<BinaryNode>();
      const int64_t* d = b && b->op == BinaryOp::Div && is_v(b->a) ? as_const_int(b->b) : nullptr;
      if (d && *d > 0) return *d;
      return std::nullopt;
    };
    std::vector<LoopPart> parts;
    auto add = [&parts](LoopPart p) {
      if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    };
    for (const Expr& e : index) {
      visit_pre_order(e, [&](const Expr& n) {
        auto* b = n->as<BinaryNode>();
        if (b && b->op == BinaryOp::Mod) {
          const int64_t* m = as_const_int(b->b);
          std::optional<int64_t> d = divided_v(b->a);
          if (m && *m > 0 && d) {
            add({*d, *m});
            return false;
          }
        }
        if (std::optional<int64_t> d = divided_v(n)) {
          add({*d, 0});
          return false;
        }
        return true;
      });
    }
    const std::vector<LoopPart> whole = {LoopPart{}};
    if (parts.empty() || std::find(parts.begin(), parts.end(), LoopPart{}) != parts.end()) return whole;
    std::sort(parts.begin(), parts.end(), [](const LoopPart& x, const LoopPart& y) { return x.divisor > y.divisor; });
    // Digits: each part's range lies below the next outer part's divisor.
    for (size_t i = 1; i < parts.size(); ++i)
      if (parts[i].modulus == 0 || parts[i].divisor * parts[i].modulus > parts[i - 1].divisor) return whole;
    return parts;
  }

  // Whether the packed layout would hold copies of the tensor's elements: a loop that indexes
  // it through an expression the packer cannot split into digits, such as (x + 1) % 2, is a
  // coordinate over its whole extent. Rounding ragged tiles up may add a little; more than
  // twice the tensor is replication, which costs more memory traffic than the layout saves.
  static bool replicates(const PackedLayout& layout, const Operation& tensor) {
    int64_t packed = 1, plain = 1;
    for (int64_t extent : layout.shape) packed *= extent;
    for (int64_t extent : tensor.shape) plain *= extent;
    return packed > 2 * plain;
  }

  // A const input marked for layout rewrite is stored in the order of the loops of its one
  // consumer that index it: element (l1, l2, ...) of the packed tensor is what the consumer
  // reads at those loop values. Loads with different indices, and layouts that would replicate
  // the tensor, keep the plain layout.
  void plan_packed_layouts(LoweredKernel& k) {
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (!st.is_placeholder() || !st.layout_rewrite) continue;
      std::vector<int> consumers = state_.consumers(s);
      if (consumers.size() != 1 || !info(consumers[0]).computed) continue;
      int c = consumers[0];
      VarMap values = nest_.root_values(c);
      std::vector<Expr> index;
      bool consistent = true;
      for (const LoadNode* l : collect_loads(info(c).body)) {
        if (l->tensor != st.op->name) continue;
        std::vector<Expr> idx;
        for (auto& e : l->indices) idx.push_back(simplify(substitute(e, values), nest_.ranges()));
        if (index.empty()) {
          index = idx;
        } else {
          for (size_t d = 0; d < idx.size(); ++d) consistent = consistent && structural_equal(idx[d], index[d]);
        }
      }
      if (index.empty() || !consistent) continue;
      PackedLayout layout;
      layout.tensor = st.op->name;
      // Packed by the kernel itself, the copy is a workspace whose coordinates are the packing
      // loops' own, never the consumer's loop variables.
      const bool in_kernel = !st.op->is_const;
      layout.buffer = in_kernel ? packed_buffer_name(st.op->name) : st.op->name;
      std::vector<const VarNode*> loops = info(c).scope;
      for (int leaf : state_.stage(c).leaves) loops.push_back(info(c).vars[leaf].get());
      VarMap to_packer;
      for (const VarNode* v : loops) {
        bool used = false;
        for (auto& e : index) used = used || uses_var(e, v);
        if (!used) continue;
        const Var& loop = nest_.loop_var(v);
        // Each part is a coordinate of its own (the whole loop is the one part {1, 0}); the
        // packer rebuilds the loop's value from the parts' digits.
        const std::vector<LoopPart> parts = parts_read_by(index, v);
        Expr value;
        for (size_t i = 0; i < parts.size(); ++i) {
          Var digit = parts.size() == 1 && !in_kernel ? loop : make_var(nest_.unique_var_name(v->name + "_" + std::to_string(i)));
          int64_t extent = (nest_.loop_extent(v) + parts[i].divisor - 1) / parts[i].divisor;
          Expr access = parts[i].divisor > 1 ? div(loop, int_imm(parts[i].divisor)) : Expr(loop);
          if (parts[i].modulus > 0) {
            access = mod(access, int_imm(parts[i].modulus));
            extent = std::min(extent, parts[i].modulus);
          }
          layout.coords.push_back(digit);
          layout.shape.push_back(extent);
          layout.access.push_back(access);
          Expr term = parts[i].divisor > 1 ? mul(digit, int_imm(parts[i].divisor)) : Expr(digit);
          value = value ? add(value, term) : term;
        }
        if (value.get() != v) to_packer.emplace_back(v, value);
      }
      for (const Expr& e : index) layout.source_index.push_back(to_packer.empty() ? e : simplify(substitute(e, to_packer)));
      if (layout.coords.empty() || replicates(layout, *st.op)) continue;
      (in_kernel ? k.packed_in_kernel : k.packed_inputs).push_back(std::move(layout));
    }
    for (const auto* packed : {&k.packed_inputs, &k.packed_in_kernel})
      for (const PackedLayout& p : *packed) packed_.push_back(&p);
  }

  // Rewrites loads into buffer coordinates (region-relative for local buffers, loop coordinates
  // for packed inputs).
  Expr to_buffer_coords(const Expr& e) const {
    return rewrite_post_order(e, [&](const Expr& n) -> Expr {
      auto* l = n->as<LoadNode>();
      if (!l) return nullptr;
      for (const PackedLayout* p : packed_)
        if (p->tensor == l->tensor) return load(p->buffer, l->dtype, p->access);
      int p = state_.find_stage(l->tensor);
      if (p < 0 || !info(p).local) return nullptr;
      std::vector<Expr> idx;
      for (size_t d = 0; d < l->indices.size(); ++d) idx.push_back(sub(l->indices[d], info(p).region_min[d]));
      return load(l->tensor, l->dtype, std::move(idx));
    });
  }

  struct Guard {
    Expr cond;
    int level;  // the innermost own loop it depends on, -1 for none
    CondRole role = CondRole::Domain;
    bool tensor_edge = false;  // keeps a local stage's region inside its tensor
  };

  // Whether stage s is a block's shared copy whose elements past its tensor's edges hold zeros:
  // its fetch stores a zero where the tensor has no element (build), so that a tile may sum its
  // products there unguarded (adds_zeros_past).
  bool fills_zeros_past_edges(int s) const {
    const Stage& st = state_.stage(s);
    return info(s).computed && info(s).local && st.scope == MemoryScope::Shared && !st.op->reduction();
  }

  // Whether the updates of reduction stage s that a split of iterator `node` overshoots add
  // nothing, so that the split needs no guard: `node` is a reduction axis or the outer part of
  // its splits (past the part's extent is past the axis's end), and the sum's source is a product
  // whose every factor reads a zero-filling shared copy that ends where the axis does, along it,
  // inside the copy's region for every value of the loops. Both factors are zero there, so that
  // no garbage (an infinity times a zero) reaches the sum. A ragged k of a tensor-core tile is
  // such a split: its calls cover whole steps of the instruction (docs/cuda.md).
  bool adds_zeros_past(int s, int node) const {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    auto* r = in.body->as<ReduceNode>();
    if (!r || r->op != ReduceOp::Sum || r->condition) return false;
    while (node >= st.num_roots) {
      auto rel = std::find_if(st.relations.begin(), st.relations.end(), [node](const IterRelation& x) {
        return x.kind == IterRelation::Kind::Split && x.outputs.front() == node;
      });
      if (rel == st.relations.end()) return false;
      node = rel->inputs[0];
    }
    const int axis = node - st.num_spatial_roots();
    if (axis < 0) return false;
    const VarNode* k = r->axes[axis].var.get();
    std::vector<Expr> factors;
    std::function<void(const Expr&)> collect = [&](const Expr& e) {
      if (auto* b = e->as<BinaryNode>(); b && b->op == BinaryOp::Mul) {
        collect(b->a);
        collect(b->b);
      } else if (auto* c = e->as<CastNode>()) {
        collect(c->value);
      } else if (auto* f = e->as<CallNode>(); f && f->fn == MathFn::Tf32) {
        collect(f->args[0]);
      } else {
        factors.push_back(e);
      }
    };
    collect(r->source);
    const VarMap loop_values = nest_.root_values(s);
    for (const Expr& factor : factors) {
      auto* l = factor->as<LoadNode>();
      const int p = l ? state_.find_stage(l->tensor) : -1;
      if (p < 0 || !fills_zeros_past_edges(p)) return false;
      const std::vector<int64_t>& shape = state_.stage(p).op->shape;
      bool ends_with_axis = false;
      for (size_t d = 0; d < l->indices.size(); ++d)
        ends_with_axis = ends_with_axis || (l->indices[d].get() == k && shape[d] == r->axes[axis].extent);
      if (!ends_with_axis) return false;
      const Expr copied = simplify(to_buffer_coords(substitute(factor, loop_values)), nest_.ranges());
      auto* in_copy = copied->as<LoadNode>();
      if (!in_copy) return false;
      for (size_t d = 0; d < in_copy->indices.size(); ++d)
        if (!Interval::range(info(p).region_extent[d]).contains(bound_of(in_copy->indices[d], nest_.ranges()))) return false;
    }
    return true;
  }

  // Whether stage s may compute, unguarded, the elements past its tensor's edges that its ragged
  // tiles overshoot: it keeps them in its own local buffer, where they fit (its region is a
  // whole tile, not one clipped to the tensor) and no consumer reads them for an element it
  // keeps; every load it makes stays inside a buffer that holds initialised values there (packed
  // inputs are padded with zeros to whole tiles, a local producer overshoots the same way) or
  // inside a GPU block's shared copy (its whole tile, bound_inference.cpp; past the tensor it is
  // not written, and what the tile reads there only reaches elements past the tensor); and no
  // integer division by a variable can trap. Such a tile's body is then written once,
  // unguarded, and only the copy-out to the output keeps the guard (a masked last vector), as
  // oneDNN's kernels store a tile.
  bool overshoots_unguarded(int s) const {
    if (auto known = overshoots_.find(s); known != overshoots_.end()) return known->second;
    overshoots_[s] = false;  // a stage that reads itself through a producer stays guarded
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    if (!in.local || st.scope == MemoryScope::Shared) return false;
    for (int d = 0; d < st.num_spatial_roots(); ++d)
      if (!Interval::range(in.region_extent[d]).contains(bound_of(in.offsets[d], nest_.ranges()))) return false;
    VarMap values = nest_.root_values(s);
    RangeMap ranges = nest_.ranges();
    // A ragged reduction keeps its own guards (make_guards), whatever the tile overshoots: its
    // loads reach only the reduction's extent.
    if (const ReduceNode* r = st.op->reduction())
      for (size_t i = 0; i < r->axes.size(); ++i) {
        values[st.num_spatial_roots() + i].second = r->axes[i].var;
        ranges[r->axes[i].var.get()] = Interval::range(r->axes[i].extent);
      }
    std::vector<Expr> computed;
    if (auto* r = in.body->as<ReduceNode>()) {
      computed.push_back(r->source);
      if (r->condition) computed.push_back(r->condition);
    } else {
      computed.push_back(in.body);
    }
    // A block's shared copy holds the reduction's current tile only: its loads are bounded by the
    // reduction's loops there, the others over the whole reduction.
    std::vector<Expr> in_loops = computed;
    const VarMap loop_values = nest_.root_values(s);
    for (Expr& e : in_loops) e = simplify(to_buffer_coords(substitute(e, loop_values)), nest_.ranges());
    for (Expr& e : computed) e = simplify(to_buffer_coords(substitute(e, values)), ranges);
    auto shared_copy = [&](const LoadNode* l) {
      const int p = state_.find_stage(l->tensor);
      return p >= 0 && info(p).local && state_.stage(p).scope == MemoryScope::Shared;
    };
    auto inside = [&](const LoadNode* l, const RangeMap& bounds) {
      const std::vector<int64_t>* shape = nullptr;
      for (const PackedLayout* p : packed_)
        if (p->buffer == l->tensor) shape = &p->shape;
      int p = state_.find_stage(l->tensor);
      if (!shape && p >= 0 && info(p).local) {
        if (!shared_copy(l) && !overshoots_unguarded(p)) return false;
        shape = &info(p).region_extent;
      }
      if (!shape && p >= 0) shape = &state_.stage(p).op->shape;
      if (!shape || shape->size() != l->indices.size()) return false;
      for (size_t d = 0; d < l->indices.size(); ++d)
        if (!Interval::range((*shape)[d]).contains(bound_of(l->indices[d], bounds))) return false;
      return true;
    };
    for (const Expr& e : computed) {
      bool traps = false;
      visit_pre_order(e, [&traps](const Expr& n) {
        auto* b = n->as<BinaryNode>();
        traps = traps || (b && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod) && dtype_is_int(b->dtype) && !as_const_int(b->b));
        return !traps;
      });
      if (traps) return false;
      for (const LoadNode* l : collect_loads(e))
        if (l->tensor != st.op->name && !shared_copy(l) && !inside(l, ranges)) return false;
    }
    for (const Expr& e : in_loops)
      for (const LoadNode* l : collect_loads(e))
        if (shared_copy(l) && !inside(l, nest_.ranges())) return false;
    overshoots_[s] = true;
    return true;
  }

  int guard_level(const Stage& st, const StageBounds& in, const Expr& cond) const {
    int level = -1;
    for (size_t p = 0; p < st.leaves.size(); ++p)
      if (uses_var(cond, in.vars[st.leaves[p]].get())) level = static_cast<int>(p);
    return level;
  }

  // Conditions that keep the loops inside the domain: a ragged split overshoots its parent,
  // which is guarded wherever it cannot be proven not to (split parents include the roots);
  // a region can reach past the tensor.
  std::vector<Guard> make_guards(int s, bool spatial_only) const {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    const bool overshoot = overshoots_unguarded(s);
    std::vector<Guard> guards;
    // A split of a split's part can require what its parent's split already does: once is enough.
    auto require = [&](const Expr& cond, bool tensor_edge) {
      Expr c = simplify(cond, nest_.ranges());
      bool known = std::any_of(guards.begin(), guards.end(), [&](const Guard& g) { return structural_equal(g.cond, c); });
      if (!is_const_int(c, 1) && !known) guards.push_back({c, guard_level(st, in, c), CondRole::Domain, tensor_edge});
    };
    for (const IterRelation& rel : st.relations) {
      if (rel.kind != IterRelation::Kind::Split) continue;
      int parent = rel.inputs[0];
      if (spatial_only && in.reduce_node[parent]) continue;
      if (overshoot && !in.reduce_node[parent]) continue;
      Expr v = simplify(in.values[parent], nest_.ranges());
      if (bound_of(v, nest_.ranges()).max >= in.extents[parent] && !(in.reduce_node[parent] && adds_zeros_past(s, parent)))
        require(lt(v, int_imm(in.extents[parent])), false);
    }
    if (in.local && !overshoot) {
      for (int d = 0; d < st.num_spatial_roots(); ++d) {
        Expr global = simplify(add(in.region_min[d], in.offsets[d]), nest_.ranges());
        require(lt(global, int_imm(st.op->shape[d])), true);
        require(ge(global, int_imm(0)), true);
      }
    }
    return guards;
  }

  // The condition, in the stage's own axes, outside which e equals `value`: a select whose
  // false value it is, a load of a computed stage whose value is such a select (a padding stage:
  // its axes replaced by the load's indices) and, for a zero, a product with such a factor or
  // a conversion of one. Null for none.
  Expr equals_outside(const Expr& e, const Expr& value) const {
    if (auto* sel = e->as<SelectNode>()) return structural_equal(sel->false_value, value) ? sel->cond : nullptr;
    const bool zero = is_const_zero(value);
    if (auto* c = e->as<CastNode>(); c && zero) return equals_outside(c->value, make_const(c->value->dtype, 0));
    if (auto* b = e->as<BinaryNode>(); b && b->op == BinaryOp::Mul && zero) {
      Expr x = equals_outside(b->a, value), y = equals_outside(b->b, value);
      return x && y ? logical_and(x, y) : x ? x : y;
    }
    auto* l = e->as<LoadNode>();
    const int p = l ? state_.find_stage(l->tensor) : -1;
    if (p < 0 || !state_.stage(p).op->body || state_.stage(p).op->reduction()) return nullptr;
    const Operation& producer = *state_.stage(p).op;
    Expr c = equals_outside(producer.body, value);
    if (!c) return nullptr;
    VarMap at_load;
    for (size_t d = 0; d < producer.axes.size(); ++d) at_load.emplace_back(producer.axes[d].var.get(), l->indices[d]);
    return substitute(c, at_load);
  }

  // Guards that skip the updates of reduction stage s that would combine its identity: a sum
  // over a padded input adds nothing where a tap reads the padding (oneDNN's kernels skip those
  // taps too), a max over a padding of the identity takes nothing from it. A condition is kept
  // only where it sits around whole register tiles: it depends on a reduction loop, and every
  // loop from the outermost reduction loop (`prefix`) down to the innermost one it depends on
  // is a serial reduction loop. The skip is exact but for an update of zero times an infinity
  // or a NaN, which the sum then lacks, as the libraries' sums do. CPU programs only: on a GPU
  // the skipped loops can hold a block's barriers, which every thread must reach.
  void add_identity_skipping_guards(int s, int prefix, std::vector<Guard>& guards) const {
    for (const Stage& other : state_.stages())
      for (int leaf : other.leaves)
        if (is_thread_binding(other.iters[leaf].annotation)) return;
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    auto* r = in.body->as<ReduceNode>();
    Expr skip = equals_outside(r->source, reduce_identity(r->op, st.op->dtype));
    if (!skip) return;
    std::vector<Expr> conjuncts;
    split_conjuncts(simplify(to_buffer_coords(substitute(skip, nest_.root_values(s))), nest_.ranges()), conjuncts);
    for (const Expr& c : conjuncts) {
      const int level = guard_level(st, in, c);
      bool around_tiles = level >= prefix;
      for (int p = prefix; around_tiles && p <= level; ++p)
        around_tiles = in.reduce_node[st.leaves[p]] && st.leaf(p).kind == IterKind::Reduce && st.leaf(p).annotation == IterAnnotation::None;
      const bool known = std::any_of(guards.begin(), guards.end(), [&](const Guard& g) { return structural_equal(g.cond, c); });
      if (around_tiles && !known && !is_const_int(c, 1)) guards.push_back({c, level, CondRole::SkipIdentity});
    }
  }

  // The guards at `level` around body: the identity-skipping ones inside the domain's.
  Stmt wrap_guards(const std::vector<Guard>& guards, int level, Stmt body) const {
    for (CondRole role : {CondRole::SkipIdentity, CondRole::Domain}) {
      Expr cond;
      for (const Guard& g : guards)
        if (g.level == level && g.role == role) cond = cond ? logical_and(cond, g.cond) : g.cond;
      if (cond) body = make_if(cond, body, nullptr, role);
    }
    return body;
  }

  std::vector<Expr> store_indices(int s) const {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    std::vector<Expr> idx;
    for (int d = 0; d < st.num_spatial_roots(); ++d)
      idx.push_back(in.local ? in.offsets[d] : simplify(add(in.region_min[d], in.offsets[d]), nest_.ranges()));
    return idx;
  }

  Stmt build(int s) {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    VarMap values = nest_.root_values(s);
    std::vector<Expr> idx = store_indices(s);
    const ReduceNode* red = st.op->reduction();
    DType t = st.op->dtype;

    Stmt body;
    int prefix = static_cast<int>(st.leaves.size());
    Stmt init;
    std::vector<Guard> guards = make_guards(s, false);
    if (!red) {
      Expr value = simplify(to_buffer_coords(substitute(in.body, values)), nest_.ranges());
      if (fills_zeros_past_edges(s)) {
        Expr inside;
        for (const Guard& g : guards)
          if (g.tensor_edge) inside = inside ? logical_and(inside, g.cond) : g.cond;
        guards.erase(std::remove_if(guards.begin(), guards.end(), [](const Guard& g) { return g.tensor_edge; }), guards.end());
        if (inside) value = select(inside, value, make_const(t, 0));
      }
      body = make_store(st.op->name, idx, value);
    } else if (int across = thread_bound_reduction_loop(s); across >= 0) {
      body = build_cross_thread_reduction(s, across, values, idx, guards);
    } else {
      auto* r = in.body->as<ReduceNode>();
      Expr src = simplify(to_buffer_coords(substitute(r->source, values)), nest_.ranges());
      body = make_store(st.op->name, idx, reduce_combine(red->op, load(st.op->name, t, idx), src));
      if (r->condition) body = make_if(simplify(to_buffer_coords(substitute(r->condition, values)), nest_.ranges()), body);
      for (size_t p = 0; p < st.leaves.size(); ++p) {
        if (in.reduce_node[st.leaves[p]]) {
          prefix = static_cast<int>(p);
          break;
        }
      }
      bool mixed = false;
      for (size_t p = prefix; p < st.leaves.size(); ++p) mixed = mixed || st.leaf(static_cast<int>(p)).kind == IterKind::Mixed;
      if (mixed) {
        // A loop fusing spatial and reduction axes leaves no loop level that precedes every
        // update of an element and no other element's: initialise the whole region first.
        prefix = 0;
        init = build_region_init(s, reduce_identity(red->op, t));
      } else {
        init = build_init(s, prefix, idx, reduce_identity(red->op, t));
        add_identity_skipping_guards(s, prefix, guards);
      }
    }

    // The stage's pragma unrolls its loops and those of the stages computed inside it.
    const int unroll = st.pragma(PragmaKind::AutoUnrollMaxStep);
    int enclosing_unroll = unroll_step_;
    unroll_step_ = std::max(unroll_step_, unroll);
    if (unroll_step_ > 0) unroll_steps_[st.op->name] = unroll_step_;
    Stmt nest = build_level(s, 0, prefix, guards, init, body);
    if (unroll > 0) nest = apply_auto_unroll(nest, unroll);
    unroll_step_ = enclosing_unroll;
    return nest;
  }

  // The prefetch_bytes and stream_stores pragmas of stage s, as the hints of its stores.
  void add_memory_hints(LoweredKernel& k, int s) const {
    const Stage& st = state_.stage(s);
    const int prefetch_bytes = st.pragma(PragmaKind::PrefetchBytes);
    const bool stream_stores = st.pragma(PragmaKind::StreamStores) != 0;
    if (prefetch_bytes == 0 && !stream_stores) return;
    for (const Stage& other : state_.stages())
      for (int leaf : other.leaves)
        if (is_thread_binding(other.iters[leaf].annotation))
          throw InvalidState(fmt::format("cannot lower the schedule: '{}' has CPU memory pragmas (prefetch_bytes, stream_stores) in a GPU program",
                                         st.op->name));
    MemoryHints hints;
    hints.prefetch_bytes = prefetch_bytes;
    const Buffer* stored = k.find_buffer(st.op->name);
    if (stream_stores) {
      if (!stored || stored->scope != BufferScope::Param || !stored->is_output)
        throw InvalidState(fmt::format("cannot lower the schedule: stream_stores on '{}', which is not a kernel output", st.op->name));
      hints.stream_stores = true;
    }
    // Inputs at least as large as what the stage stores are streams worth prefetching; a bias
    // or a scale vector stays in the cache by itself.
    int64_t region = 1;
    for (int64_t e : info(s).region_extent) region *= e;
    if (prefetch_bytes > 0) {
      for (const LoadNode* l : collect_loads(info(s).body)) {
        const Buffer* b = k.find_buffer(l->tensor);
        if (b && b->scope == BufferScope::Param && !b->is_output && b->num_elements() >= region &&
            std::find(hints.prefetched.begin(), hints.prefetched.end(), b->name) == hints.prefetched.end())
          hints.prefetched.push_back(b->name);
      }
    }
    k.memory_hints[st.op->name] = std::move(hints);
  }

  // The position of the reduction loop of stage s that is bound to a thread index, -1 for none.
  // Such a loop must be the stage's only reduction loop and its innermost loop: its threads
  // then reduce one element together, which needs no initialisation.
  int thread_bound_reduction_loop(int s) const {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    int bound = -1, reductions = 0;
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      if (!in.reduce_node[st.leaves[p]] && st.leaf(static_cast<int>(p)).kind == IterKind::Spatial) continue;
      ++reductions;
      if (thread_axis(st.leaf(static_cast<int>(p)).annotation) >= 0) bound = static_cast<int>(p);
    }
    if (bound < 0) return -1;
    if (reductions != 1 || bound != static_cast<int>(st.leaves.size()) - 1 || st.leaf(bound).annotation != IterAnnotation::ThreadX)
      throw InvalidState(fmt::format("cannot lower the schedule: reduction loop '{}' of '{}' is bound to {}, but a reduction across "
                                     "threads needs its threadIdx.x loop to be the stage's only and innermost reduction loop",
                                     st.leaf(bound).name, st.op->name, annotation_name(st.leaf(bound).annotation)));
    return bound;
  }

  // The store of a reduction whose innermost loop (position `loop`) is bound to threadIdx.x:
  // each thread contributes its value, the identity where the reduction's condition or a guard
  // inside that loop excludes it, and the threads combine their contributions. The guards
  // folded into the value are removed from `guards`.
  Stmt build_cross_thread_reduction(int s, int loop, const VarMap& values, const std::vector<Expr>& idx, std::vector<Guard>& guards) {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    const ReduceNode* red = st.op->reduction();
    auto* r = in.body->as<ReduceNode>();
    Expr identity = reduce_identity(red->op, st.op->dtype);
    Expr value = simplify(to_buffer_coords(substitute(r->source, values)), nest_.ranges());
    Expr keep;
    if (r->condition) keep = simplify(to_buffer_coords(substitute(r->condition, values)), nest_.ranges());
    std::vector<Guard> outside;
    for (const Guard& g : guards) {
      if (g.level < loop) {
        outside.push_back(g);
      } else {
        keep = keep ? logical_and(keep, g.cond) : g.cond;
      }
    }
    guards = std::move(outside);
    if (keep) value = select(keep, value, identity);
    return make_store(st.op->name, idx, value, ThreadReduction{red->op, in.vars[st.leaves[loop]], IterAnnotation::ThreadX});
  }

  // Everything inside the loops before position pos.
  Stmt build_level(int s, int pos, int prefix, const std::vector<Guard>& guards, const Stmt& init, const Stmt& body) {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    int num_leaves = static_cast<int>(st.leaves.size());
    Stmt rest;
    if (pos == num_leaves) {
      rest = body;
    } else {
      int leaf = st.leaves[pos];
      const Iterator& it = st.iters[leaf];
      rest = make_for(in.vars[leaf], in.extents[leaf], for_kind_of(it.annotation),
                      build_level(s, pos + 1, prefix, guards, init, body), it.annotation);
    }
    if (init && pos == prefix) rest = make_seq({init, rest});
    rest = wrap_guards(guards, pos - 1, rest);
    if (pos == 0) return rest;

    std::vector<Stmt> parts;
    std::vector<int> locals;
    for (int a : in.attached[st.leaves[pos - 1]]) {
      parts.push_back(build(a));
      if (info(a).local) locals.push_back(a);
    }
    parts.push_back(rest);
    Stmt out = make_seq(std::move(parts));
    for (auto it = locals.rbegin(); it != locals.rend(); ++it) out = make_allocate(name_of(*it), out);
    return out;
  }

  // The initialisation of a reduction over the whole region the stage computes.
  Stmt build_region_init(int s, const Expr& identity) {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    std::vector<Var> vars;
    std::vector<Expr> idx;
    Expr inside;
    for (int d = 0; d < st.num_spatial_roots(); ++d) {
      Var v = make_var(nest_.unique_var_name(st.iters[d].name + "_init"));
      nest_.add_range(v.get(), in.region_extent[d]);
      vars.push_back(v);
      idx.push_back(v);
      if (in.local) {
        Expr global = simplify(add(in.region_min[d], v), nest_.ranges());
        for (Expr c : {lt(global, int_imm(st.op->shape[d])), ge(global, int_imm(0))}) {
          c = simplify(c, nest_.ranges());
          if (!is_const_int(c, 1)) inside = inside ? logical_and(inside, c) : c;
        }
      } else {
        idx.back() = simplify(add(in.region_min[d], v), nest_.ranges());
      }
    }
    Stmt body = make_store(st.op->name, idx, identity);
    if (inside) body = make_if(inside, body);
    for (size_t d = vars.size(); d-- > 0;) body = make_for(vars[d], in.region_extent[d], ForKind::Serial, body);
    return body;
  }

  // The initialisation of a reduction: loops over the spatial loops after the prefix.
  Stmt build_init(int s, int prefix, const std::vector<Expr>& idx, const Expr& identity) {
    const Stage& st = state_.stage(s);
    const StageBounds& in = info(s);
    VarMap rename;
    std::vector<std::pair<Var, int>> loops;
    for (size_t p = prefix; p < st.leaves.size(); ++p) {
      int leaf = st.leaves[p];
      if (in.reduce_node[leaf]) continue;
      Var v = make_var(nest_.unique_var_name(in.vars[leaf]->name + "_init"));
      nest_.add_range(v.get(), in.extents[leaf]);
      rename.push_back({in.vars[leaf].get(), v});
      loops.push_back({v, leaf});
    }
    std::vector<Expr> init_idx;
    for (auto& e : idx) init_idx.push_back(substitute(e, rename));
    Stmt body = make_store(st.op->name, init_idx, identity);
    Expr cond;
    for (const Guard& g : make_guards(s, true)) {
      if (g.level < prefix) continue;  // already guarded outside
      Expr c = substitute(g.cond, rename);
      cond = cond ? logical_and(cond, c) : c;
    }
    if (cond) body = make_if(cond, body);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      IterAnnotation a = st.iters[it->second].annotation;
      bool keep = a == IterAnnotation::Vectorize || a == IterAnnotation::Unroll || is_thread_binding(a);
      body = make_for(it->first, in.extents[it->second], keep ? for_kind_of(a) : ForKind::Serial, body,
                      keep ? a : IterAnnotation::None);
    }
    return body;
  }

  const State& state_;
  LoopNest nest_;
  std::vector<const PackedLayout*> packed_;
  mutable std::map<int, bool> overshoots_;  // overshoots_unguarded, per stage
  int unroll_step_ = 0;  // the largest auto_unroll_max_step of the stages being built
  std::map<std::string, int> unroll_steps_;
};

}  // namespace

LoweredKernel lower_state(const State& state, const std::string& function_name, const LowerOptions& options) {
  LoweredKernel k = insert_gpu_barriers(Lowerer(state).build_kernel());
  k.name = function_name;
  bool gpu = false;
  for_each_stmt(k.body, [&gpu](const Stmt& s) {
    auto* f = s->as<ForNode>();
    gpu = gpu || (f && f->for_kind == ForKind::ThreadBinding);
  });
  for (const PackedLayout& layout : k.packed_inputs) {
    const Operation& op = *state.stage(state.find_stage(layout.tensor)).op;
    k.packers.push_back(lower_packing(layout, op.dtype, op.shape, function_name + "_pack_" + layout.tensor, gpu));
  }
  if (gpu && !k.packed_in_kernel.empty())
    throw InvalidState(fmt::format("cannot lower the schedule: '{}' is not const; a GPU kernel packs only const inputs (by the caller)",
                                   k.packed_in_kernel.front().tensor));
  // Each call packs its non-const inputs first, in the packers' loops (the outermost parallel
  // where the tensor is large), then computes.
  std::vector<Stmt> body;
  for (const PackedLayout& layout : k.packed_in_kernel) {
    const Operation& op = *state.stage(state.find_stage(layout.tensor)).op;
    body.push_back(lower_packing(layout, op.dtype, op.shape, function_name + "_pack_" + layout.tensor).body);
  }
  if (!body.empty()) {
    body.push_back(k.body);
    k.body = make_seq(std::move(body));
  }
  finish_loop_program(k, options.expand_unrolled_loops);
  take_codegen_decisions(k, options.target);
  return k;
}

}  // namespace ansor
