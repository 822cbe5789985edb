// State to loop program: inlining, bound inference, loop nests, guards and reductions.
#include "lower/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/arith.h"
#include "lower/gpu_sync.h"
#include "lower/sym_interval.h"
#include "schedule/iter_graph.h"

namespace ansor {

namespace {

struct StageInfo {
  bool lowered = false;          // a compute stage that gets its own loops
  Expr body;                     // the op's body with inlined producers substituted
  std::vector<Var> vars;         // per iterator: its loop variable
  std::vector<int64_t> extents;  // per iterator, where the stage is computed
  std::vector<Expr> values;      // per iterator: its value, from the loops
  std::vector<Expr> offsets;     // per root: the value within the region, from the loops
  std::vector<Expr> region_min;  // per spatial root
  std::vector<int64_t> region_extent;
  std::vector<bool> reduce_node;  // per iterator: depends on a reduction axis
  bool local = false;             // stored in a buffer of the region's shape
  std::vector<const VarNode*> scope;  // loops enclosing the stage, outermost first
  std::vector<std::vector<int>> attached;  // per iterator: stages computed inside that loop
};

ForKind for_kind_of(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::None: return ForKind::Serial;
    case IterAnnotation::Unroll: return ForKind::Unrolled;
    case IterAnnotation::Vectorize: return ForKind::Vectorized;
    case IterAnnotation::Parallel: return ForKind::Parallel;
    default: return ForKind::ThreadBinding;
  }
}

class Lowerer {
 public:
  explicit Lowerer(const State& state) : state_(state), info_(state.num_stages()) {}

  // Inlining, loop variables and bound inference: everything but the statements.
  void analyze() {
    validate();
    substitute_inlined();
    // Loop variables are named in program order, so the first loop named i is plain `i`.
    for (int s = 0; s < state_.num_stages(); ++s)
      if (info_[s].lowered) create_loop_vars(s);
    for (int s = state_.num_stages() - 1; s >= 0; --s) {
      if (!info_[s].lowered) continue;
      compute_region(s);
      compute_iterators(s);
    }
  }

  // The extent of every iterator of every computed stage (empty for the others).
  std::vector<std::vector<int64_t>> iterator_extents() const {
    std::vector<std::vector<int64_t>> out;
    for (const StageInfo& in : info_) out.push_back(in.extents);
    return out;
  }

  LoweredKernel build_kernel(const std::string& name) {
    LoweredKernel k;
    k.name = name;
    plan_packed_layouts(k);
    make_buffers(k);
    std::vector<Stmt> body;
    for (int s = 0; s < state_.num_stages(); ++s)
      if (info_[s].lowered && state_.stage(s).location == ComputeLocation::Root) body.push_back(build(s));
    k.body = make_seq(std::move(body));
    return k;
  }

 private:
  [[noreturn]] void invalid(const std::string& msg) const { throw InvalidState("cannot lower the schedule: " + msg); }

  const std::string& name_of(int s) const { return state_.stage(s).op->name; }

  void validate() {
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      info_[s].lowered = !st.is_placeholder() && st.location != ComputeLocation::Inlined;
      info_[s].attached.assign(st.iters.size(), {});
      if (st.location == ComputeLocation::Inlined) {
        if (st.is_placeholder() || st.op->reduction() || state_.is_kernel_output(s))
          invalid(fmt::format("stage '{}' cannot be inlined", name_of(s)));
      }
    }
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (st.location != ComputeLocation::At) continue;
      int t = st.attach_stage;
      if (st.is_placeholder() || t <= s || t >= state_.num_stages() || !info_[t].lowered)
        invalid(fmt::format("stage '{}' is attached to an invalid stage", name_of(s)));
      if (st.attach_iter < 0 || st.attach_iter >= static_cast<int>(state_.stage(t).iters.size()) ||
          state_.stage(t).leaf_position(st.attach_iter) < 0)
        invalid(fmt::format("stage '{}' is attached to a loop '{}' does not have", name_of(s), name_of(t)));
      info_[t].attached[st.attach_iter].push_back(s);
    }
  }

  void substitute_inlined() {
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (st.is_placeholder()) continue;
      info_[s].body = rewrite_post_order(st.op->body, [&](const Expr& e) -> Expr {
        auto* l = e->as<LoadNode>();
        if (!l) return nullptr;
        int p = state_.find_stage(l->tensor);
        if (p < 0 || state_.stage(p).location != ComputeLocation::Inlined) return nullptr;
        VarMap map;
        const Operation& op = *state_.stage(p).op;
        for (size_t d = 0; d < op.axes.size(); ++d) map.push_back({op.axes[d].var.get(), l->indices[d]});
        return substitute(info_[p].body, map);
      });
    }
  }

  // The values of a lowered stage's op axes and reduction axes in terms of its loops.
  VarMap root_values(int s) const {
    const Stage& st = state_.stage(s);
    const StageInfo& in = info_[s];
    VarMap map;
    int n = st.num_spatial_roots();
    for (int d = 0; d < n; ++d) map.push_back({st.op->axes[d].var.get(), add(in.region_min[d], in.offsets[d])});
    if (const ReduceNode* r = st.op->reduction())
      for (size_t i = 0; i < r->axes.size(); ++i) map.push_back({r->axes[i].var.get(), in.offsets[n + i]});
    return map;
  }

  void compute_region(int s) {
    const Stage& st = state_.stage(s);
    StageInfo& in = info_[s];
    int n = st.num_spatial_roots();
    in.region_min.assign(n, int_imm(0));
    in.region_extent = st.op->shape;
    if (st.location != ComputeLocation::At) return;

    int t = st.attach_stage;
    const Stage& target = state_.stage(t);
    in.scope = info_[t].scope;
    int pos = target.leaf_position(st.attach_iter);
    for (int p = 0; p <= pos; ++p) in.scope.push_back(info_[t].vars[target.leaves[p]].get());
    in.local = true;

    std::unordered_set<const VarNode*> fixed(in.scope.begin(), in.scope.end());
    std::unordered_map<const VarNode*, int64_t> relaxed;
    for (auto& [var, extent] : loop_extent_)
      if (!fixed.count(var)) relaxed[var] = extent;

    std::vector<SymInterval> region(n);
    bool found = false;
    for (int c = s + 1; c < state_.num_stages(); ++c) {
      if (!info_[c].lowered) continue;
      VarMap values = root_values(c);
      for (const LoadNode* l : collect_loads(info_[c].body)) {
        if (l->tensor != st.op->name) continue;
        for (int d = 0; d < n; ++d) {
          SymInterval iv = relax(simplify(substitute(l->indices[d], values)), relaxed);
          region[d] = found ? union_of(region[d], iv) : iv;
        }
        found = true;
      }
    }
    if (!found) invalid(fmt::format("stage '{}' is attached but nothing reads it", name_of(s)));
    for (int d = 0; d < n; ++d) {
      if (region[d].unknown || region[d].span + 1 >= st.op->shape[d]) continue;
      in.region_min[d] = simplify(region[d].lo, ranges_);
      in.region_extent[d] = region[d].span + 1;
      visit_pre_order(in.region_min[d], [&](const Expr& e) {
        if (e->kind == ExprKind::Var && !fixed.count(e->as<VarNode>()))
          invalid(fmt::format("stage '{}' is attached inside '{}' but is read outside that loop", name_of(s), name_of(t)));
        return true;
      });
    }
  }

  std::string unique_var_name(const std::string& base) {
    std::string name = base;
    for (int i = 1; !used_names_.insert(name).second; ++i) name = fmt::format("{}_{}", base, i);
    return name;
  }

  void create_loop_vars(int s) {
    const Stage& st = state_.stage(s);
    info_[s].vars.assign(st.iters.size(), nullptr);
    for (int leaf : st.leaves) {
      info_[s].vars[leaf] = make_var(unique_var_name(st.iters[leaf].name));
      all_vars_.push_back(info_[s].vars[leaf]);
    }
  }

  void compute_iterators(int s) {
    const Stage& st = state_.stage(s);
    StageInfo& in = info_[s];
    for (const IterRelation& rel : st.relations)
      for (int64_t f : rel.factors)
        if (f < 1) invalid(fmt::format("a split of '{}' has an undecided length", name_of(s)));
    std::vector<int64_t> root_extents(st.num_roots);
    for (int r = 0; r < st.num_roots; ++r) root_extents[r] = r < st.num_spatial_roots() ? in.region_extent[r] : reduce_extent(st, r);
    in.extents = propagate_extents(st, root_extents);
    in.reduce_node = reduction_iterators(st);
    std::vector<Expr> value(st.iters.size());
    for (int leaf : st.leaves) {
      if (in.extents[leaf] < 1) invalid(fmt::format("loop '{}' of '{}' has no extent", st.iters[leaf].name, name_of(s)));
      value[leaf] = in.vars[leaf];
      loop_extent_[in.vars[leaf].get()] = in.extents[leaf];
      ranges_[in.vars[leaf].get()] = Interval::range(in.extents[leaf]);
    }
    try {
      propagate_values(st, in.extents, value);
    } catch (const std::logic_error& e) {
      invalid(e.what());
    }
    in.offsets.clear();
    for (int r = 0; r < st.num_roots; ++r) {
      if (!value[r]) invalid(fmt::format("axis '{}' of '{}' has no loop", st.iters[r].name, name_of(s)));
      in.offsets.push_back(simplify(value[r], ranges_));
    }
    in.values = std::move(value);
  }

  static int64_t reduce_extent(const Stage& st, int root) {
    return st.op->reduction()->axes[root - st.num_spatial_roots()].extent;
  }

  void make_buffers(LoweredKernel& k) {
    const ComputeDAG& dag = state_.dag();
    auto param = [&](int op_index, bool output) {
      const Operation& op = dag.op(op_index);
      Buffer b{op.name, op.dtype, op.shape, row_major_strides(op.shape), BufferScope::Param, output, op.is_const};
      if (const PackedLayout* p = k.find_packed(op.name)) {
        b.shape = p->shape;
        b.strides = row_major_strides(p->shape);
      }
      k.params.push_back(static_cast<int>(k.buffers.size()));
      k.buffers.push_back(std::move(b));
    };
    for (int i : dag.inputs()) param(i, false);
    for (int o : dag.outputs()) param(o, true);
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (!info_[s].lowered || state_.is_kernel_output(s)) continue;
      Buffer b;
      b.name = st.op->name;
      b.dtype = st.op->dtype;
      b.shape = info_[s].region_extent;
      b.scope = !info_[s].local ? BufferScope::Workspace : st.scope == MemoryScope::Shared ? BufferScope::Shared : BufferScope::Local;
      b.strides = aligned_strides(st, b.shape);
      k.buffers.push_back(std::move(b));
    }
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

  // A const input marked for layout rewrite is stored in the order of the loops of its one
  // consumer that index it: element (l1, l2, ...) of the packed tensor is what the consumer
  // reads at those loop values. Loads with different indices keep the plain layout.
  void plan_packed_layouts(LoweredKernel& k) {
    for (int s = 0; s < state_.num_stages(); ++s) {
      const Stage& st = state_.stage(s);
      if (!st.is_placeholder() || !st.layout_rewrite) continue;
      std::vector<int> consumers = state_.consumers(s);
      if (consumers.size() != 1 || !info_[consumers[0]].lowered) continue;
      int c = consumers[0];
      VarMap values = root_values(c);
      std::vector<Expr> index;
      bool consistent = true;
      for (const LoadNode* l : collect_loads(info_[c].body)) {
        if (l->tensor != st.op->name) continue;
        std::vector<Expr> idx;
        for (auto& e : l->indices) idx.push_back(simplify(substitute(e, values), ranges_));
        if (index.empty()) {
          index = idx;
        } else {
          for (size_t d = 0; d < idx.size(); ++d) consistent = consistent && structural_equal(idx[d], index[d]);
        }
      }
      if (index.empty() || !consistent) continue;
      PackedLayout layout;
      layout.tensor = st.op->name;
      std::vector<const VarNode*> loops = info_[c].scope;
      for (int leaf : state_.stage(c).leaves) loops.push_back(info_[c].vars[leaf].get());
      VarMap to_packer;
      for (const VarNode* v : loops) {
        bool used = false;
        for (auto& e : index) used = used || uses_var(e, v);
        if (!used) continue;
        const Var& loop = *std::find_if(all_vars_.begin(), all_vars_.end(), [&](const Var& x) { return x.get() == v; });
        // Each part is a coordinate of its own (the whole loop is the one part {1, 0}); the
        // packer rebuilds the loop's value from the parts' digits.
        const std::vector<LoopPart> parts = parts_read_by(index, v);
        Expr value;
        for (size_t i = 0; i < parts.size(); ++i) {
          Var digit = parts.size() == 1 ? loop : make_var(unique_var_name(v->name + "_" + std::to_string(i)));
          int64_t extent = (loop_extent_.at(v) + parts[i].divisor - 1) / parts[i].divisor;
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
      if (layout.coords.empty()) continue;
      k.packed_inputs.push_back(std::move(layout));
    }
    for (const PackedLayout& p : k.packed_inputs) packed_.push_back(&p);
  }

  // Rewrites loads into buffer coordinates (region-relative for local buffers, loop coordinates
  // for packed inputs).
  Expr to_buffer_coords(const Expr& e) const {
    return rewrite_post_order(e, [&](const Expr& n) -> Expr {
      auto* l = n->as<LoadNode>();
      if (!l) return nullptr;
      for (const PackedLayout* p : packed_)
        if (p->tensor == l->tensor) return load(l->tensor, l->dtype, p->access);
      int p = state_.find_stage(l->tensor);
      if (p < 0 || !info_[p].local) return nullptr;
      std::vector<Expr> idx;
      for (size_t d = 0; d < l->indices.size(); ++d) idx.push_back(sub(l->indices[d], info_[p].region_min[d]));
      return load(l->tensor, l->dtype, std::move(idx));
    });
  }

  struct Guard {
    Expr cond;
    int level;  // the innermost own loop it depends on, -1 for none
  };

  int guard_level(const Stage& st, const StageInfo& in, const Expr& cond) const {
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
    const StageInfo& in = info_[s];
    std::vector<Guard> guards;
    auto require = [&](const Expr& cond) {
      Expr c = simplify(cond, ranges_);
      if (!is_const_int(c, 1)) guards.push_back({c, guard_level(st, in, c)});
    };
    for (const IterRelation& rel : st.relations) {
      if (rel.kind != IterRelation::Kind::Split) continue;
      int parent = rel.inputs[0];
      if (spatial_only && in.reduce_node[parent]) continue;
      Expr v = simplify(in.values[parent], ranges_);
      if (bound_of(v, ranges_).max >= in.extents[parent]) require(lt(v, int_imm(in.extents[parent])));
    }
    if (in.local) {
      for (int d = 0; d < st.num_spatial_roots(); ++d) {
        Expr global = simplify(add(in.region_min[d], in.offsets[d]), ranges_);
        require(lt(global, int_imm(st.op->shape[d])));
        require(ge(global, int_imm(0)));
      }
    }
    return guards;
  }

  Stmt wrap_guards(const std::vector<Guard>& guards, int level, Stmt body) const {
    Expr cond;
    for (const Guard& g : guards)
      if (g.level == level) cond = cond ? logical_and(cond, g.cond) : g.cond;
    return cond ? make_if(cond, body) : body;
  }

  std::vector<Expr> store_indices(int s) const {
    const Stage& st = state_.stage(s);
    const StageInfo& in = info_[s];
    std::vector<Expr> idx;
    for (int d = 0; d < st.num_spatial_roots(); ++d)
      idx.push_back(in.local ? in.offsets[d] : simplify(add(in.region_min[d], in.offsets[d]), ranges_));
    return idx;
  }

  Stmt build(int s) {
    const Stage& st = state_.stage(s);
    const StageInfo& in = info_[s];
    VarMap values = root_values(s);
    std::vector<Expr> idx = store_indices(s);
    const ReduceNode* red = st.op->reduction();
    DType t = st.op->dtype;

    Stmt body;
    int prefix = static_cast<int>(st.leaves.size());
    Stmt init;
    if (!red) {
      body = make_store(st.op->name, idx, simplify(to_buffer_coords(substitute(in.body, values)), ranges_));
    } else {
      auto* r = in.body->as<ReduceNode>();
      Expr src = simplify(to_buffer_coords(substitute(r->source, values)), ranges_);
      body = make_store(st.op->name, idx, reduce_combine(red->op, load(st.op->name, t, idx), src));
      if (r->condition) body = make_if(simplify(to_buffer_coords(substitute(r->condition, values)), ranges_), body);
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
      }
    }

    std::vector<Guard> guards = make_guards(s, false);
    Stmt nest = build_level(s, 0, prefix, guards, init, body);
    if (st.auto_unroll_max_step > 0) nest = apply_auto_unroll(nest, st.auto_unroll_max_step);
    return nest;
  }

  // Everything inside the loops before position pos.
  Stmt build_level(int s, int pos, int prefix, const std::vector<Guard>& guards, const Stmt& init, const Stmt& body) {
    const Stage& st = state_.stage(s);
    const StageInfo& in = info_[s];
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
      if (info_[a].local) locals.push_back(a);
    }
    parts.push_back(rest);
    Stmt out = make_seq(std::move(parts));
    for (auto it = locals.rbegin(); it != locals.rend(); ++it) out = make_allocate(name_of(*it), out);
    return out;
  }

  // The initialisation of a reduction over the whole region the stage computes.
  Stmt build_region_init(int s, const Expr& identity) {
    const Stage& st = state_.stage(s);
    const StageInfo& in = info_[s];
    std::vector<Var> vars;
    std::vector<Expr> idx;
    Expr inside;
    for (int d = 0; d < st.num_spatial_roots(); ++d) {
      Var v = make_var(unique_var_name(st.iters[d].name + "_init"));
      ranges_[v.get()] = Interval::range(in.region_extent[d]);
      vars.push_back(v);
      idx.push_back(v);
      if (in.local) {
        Expr global = simplify(add(in.region_min[d], v), ranges_);
        for (Expr c : {lt(global, int_imm(st.op->shape[d])), ge(global, int_imm(0))}) {
          c = simplify(c, ranges_);
          if (!is_const_int(c, 1)) inside = inside ? logical_and(inside, c) : c;
        }
      } else {
        idx.back() = simplify(add(in.region_min[d], v), ranges_);
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
    const StageInfo& in = info_[s];
    VarMap rename;
    std::vector<std::pair<Var, int>> loops;
    for (size_t p = prefix; p < st.leaves.size(); ++p) {
      int leaf = st.leaves[p];
      if (in.reduce_node[leaf]) continue;
      Var v = make_var(unique_var_name(in.vars[leaf]->name + "_init"));
      ranges_[v.get()] = Interval::range(in.extents[leaf]);
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
  std::vector<StageInfo> info_;
  std::unordered_map<const VarNode*, int64_t> loop_extent_;
  RangeMap ranges_;
  std::set<std::string> used_names_;
  std::vector<Var> all_vars_;
  std::vector<const PackedLayout*> packed_;
};

// Statements of the body after full unrolling; kNotUnrollable once an inner loop stays a loop.
constexpr int64_t kNotUnrollable = INT64_MAX / 4;

int64_t steps_times(int64_t extent, int64_t steps) {
  int64_t product;
  return __builtin_mul_overflow(extent, steps, &product) ? kNotUnrollable : std::min(product, kNotUnrollable);
}

Stmt unroll(const Stmt& s, int max_steps, int64_t& steps) {
  switch (s->kind) {
    case StmtKind::Store:
    case StmtKind::Barrier: steps = 1; return s;
    case StmtKind::Seq: {
      steps = 0;
      std::vector<Stmt> out;
      for (auto& x : s->as<SeqNode>()->stmts) {
        int64_t n;
        out.push_back(unroll(x, max_steps, n));
        steps = std::min(kNotUnrollable, steps + n);
      }
      return make_seq(std::move(out));
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      int64_t a = 0, b = 0;
      Stmt t = unroll(i->then_case, max_steps, a);
      Stmt e = i->else_case ? unroll(i->else_case, max_steps, b) : nullptr;
      steps = std::min(kNotUnrollable, a + b);
      return std::make_shared<IfThenElseNode>(i->cond, t, e);
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      return make_allocate(a->buffer, unroll(a->body, max_steps, steps));
    }
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      int64_t inner;
      Stmt body = unroll(f->body, max_steps, inner);
      ForKind kind = f->for_kind;
      if (kind == ForKind::Vectorized) {
        steps = inner;
      } else if ((kind == ForKind::Serial || kind == ForKind::Unrolled) && inner < kNotUnrollable &&
                 steps_times(f->extent, inner) <= max_steps) {
        kind = ForKind::Unrolled;
        steps = steps_times(f->extent, inner);
      } else {
        steps = kind == ForKind::Unrolled ? steps_times(f->extent, inner) : kNotUnrollable;
      }
      return make_for(f->var, f->extent, kind, body, f->binding);
    }
  }
  steps = kNotUnrollable;
  return s;
}

}  // namespace

Stmt apply_auto_unroll(const Stmt& s, int max_steps) {
  int64_t steps;
  return unroll(s, max_steps, steps);
}

LoweredKernel lower_state(const State& state, const std::string& function_name) {
  Lowerer lowerer(state);
  lowerer.analyze();
  return insert_gpu_barriers(lowerer.build_kernel(function_name));
}

void infer_bounds(State& state) {
  Lowerer lowerer(state);
  lowerer.analyze();
  std::vector<std::vector<int64_t>> extents = lowerer.iterator_extents();
  for (int s = 0; s < state.num_stages(); ++s) {
    Stage& st = state.mutable_stage(s);
    for (size_t i = 0; i < extents[s].size(); ++i) st.iters[i].extent = extents[s][i];
  }
}

}  // namespace ansor
