// Matching tensorized loop nests against tensor intrinsics.
#include "lower/tensorize.h"

#include "ir/arith.h"

namespace ansor {

namespace {

struct Nest {
  std::vector<const VarNode*> vars;
  std::vector<int64_t> extents;
  const StoreNode* store = nullptr;
};

// The perfect nest of loops from `loop` down to one store.
std::optional<Nest> perfect_nest(const ForNode& loop) {
  Nest nest;
  const ForNode* f = &loop;
  for (;;) {
    if (f->masked() || f->for_kind == ForKind::Parallel || f->for_kind == ForKind::ThreadBinding) return std::nullopt;
    nest.vars.push_back(f->var.get());
    nest.extents.push_back(f->extent);
    if (auto* inner = f->body->as<ForNode>()) {
      f = inner;
      continue;
    }
    nest.store = f->body->as<StoreNode>();
    if (!nest.store) return std::nullopt;
    return nest;
  }
}

bool uses_any(const Expr& e, const std::vector<const VarNode*>& vars) {
  for (const VarNode* v : vars)
    if (uses_var(e, v)) return true;
  return false;
}

// A factor of the product: a load converted to the accumulator's type (or an f32 load rounded
// by tf32()), under selects that give zero where a condition independent of the nest fails (a
// padding), those conditions collected.
struct Factor {
  const LoadNode* load = nullptr;
  std::vector<Expr> conditions;
  bool tf32 = false;
};

std::optional<Factor> factor_of(Expr e, DType acc, const Nest& nest) {
  Factor f;
  bool converted = false;
  for (;;) {
    if (auto* c = e->as<CastNode>()) {
      if (e->dtype != acc) return std::nullopt;
      converted = true;
      e = c->value;
    } else if (auto* call = e->as<CallNode>(); call && call->fn == MathFn::Tf32 && e->dtype == acc && !f.tf32) {
      f.tf32 = true;
      e = call->args[0];
    } else if (auto* s = e->as<SelectNode>()) {
      if (!is_const_zero(simplify(s->false_value)) || uses_any(s->cond, nest.vars)) return std::nullopt;
      f.conditions.push_back(s->cond);
      e = s->true_value;
    } else if (auto* l = e->as<LoadNode>()) {
      if (!converted && e->dtype != acc) return std::nullopt;
      f.load = l;
      return f;
    } else {
      return std::nullopt;
    }
  }
}

// The strides by which the flat offset of `indices` into `b` steps along the nest's variables,
// where they are the row's (any constant where the row leaves one open); nullopt elsewhere.
std::optional<std::vector<int64_t>> strides_of(const Buffer& b, const std::vector<Expr>& indices, const Nest& nest,
                                               const std::vector<int64_t>& row_strides) {
  const Expr flat = simplify(flat_index(b, indices));
  std::vector<int64_t> strides;
  for (size_t a = 0; a < nest.vars.size(); ++a) {
    std::optional<int64_t> c = linear_coefficient(flat, nest.vars[a]);
    // A loop of one iteration addresses one element whatever its stride (lowering may have
    // dropped its variable from the indices).
    if (nest.extents[a] == 1 && row_strides[a] != kAnyStride) c = row_strides[a];
    if (!c || (row_strides[a] == kAnyStride ? *c <= 0 : *c != row_strides[a])) return std::nullopt;
    strides.push_back(*c);
  }
  return strides;
}

bool has_extents(const TensorIntrinsic& row, const Nest& nest) {
  if (row.extents.size() != nest.extents.size()) return false;
  for (size_t a = 0; a < row.extents.size(); ++a)
    if (row.extents[a] != kAnyExtent && row.extents[a] != nest.extents[a]) return false;
  return true;
}

TensorCall::Operand first_element(const std::string& buffer, const std::vector<Expr>& indices, const Nest& nest) {
  VarMap zero;
  for (const VarNode* v : nest.vars) zero.push_back({v, int_imm(0)});
  std::vector<Expr> at;
  for (const Expr& i : indices) at.push_back(simplify(substitute(i, zero)));
  return {buffer, at};
}

// The value of an index expression on lane `thread`, the other variables at 0: how it varies
// across the block's threads.
std::optional<int64_t> on_thread(const Expr& index, const VarNode* thread, int64_t value) {
  VarMap at{{thread, int_imm(value)}};
  visit_pre_order(index, [&](const Expr& e) {
    if (auto* v = e->as<VarNode>(); v && v != thread) at.push_back({v, int_imm(0)});
    return true;
  });
  const Expr folded = simplify(substitute(index, at));
  const int64_t* c = as_const_int(folded);
  return c ? std::optional<int64_t>(*c) : std::nullopt;
}

// Whether every warp's lanes hold the fragments a warp row takes from them (see
// match_tensor_call), and the stride of rhs along t.
std::optional<int64_t> warp_fragments_laid_out(const Expr& lhs, const Expr& rhs, const WarpContext& warp) {
  std::optional<int64_t> lane_stride;
  for (int64_t first = 0; first < warp.threads; first += 32) {
    const std::optional<int64_t> rhs_first = on_thread(rhs, warp.thread, first), rhs_next = on_thread(rhs, warp.thread, first + 1);
    if (!rhs_first || !rhs_next) return std::nullopt;
    if (lane_stride && *lane_stride != *rhs_next - *rhs_first) return std::nullopt;
    lane_stride = *rhs_next - *rhs_first;
    for (int64_t lane = 0; lane < 32; ++lane) {
      const int64_t g = lane / 4, t = lane % 4;
      const std::optional<int64_t> l = on_thread(lhs, warp.thread, first + lane), l_of_g = on_thread(lhs, warp.thread, first + 4 * g);
      const std::optional<int64_t> r = on_thread(rhs, warp.thread, first + lane);
      if (!l || !l_of_g || *l != *l_of_g || !r || *r != *rhs_first + t * *lane_stride) return std::nullopt;
    }
  }
  return lane_stride;
}

// Whether a warp row's lanes load each register of a 16-bit operand's fragment (two consecutive
// k, axis 0 of the nest) as one aligned word: k is contiguous, and the first element of every
// lane, iteration and register is even in a shared buffer (which the launch aligns): every term
// of the first element's offset, the other axes' strides and the lanes' stride (rhs) are even.
bool loads_word_pairs(const Buffer& b, const Expr& first, const std::vector<int64_t>& strides, int64_t lane_stride) {
  if (dtype_bytes(b.dtype) != 2 || strides.empty() || strides.front() != 1) return false;
  if (b.scope != BufferScope::Shared) return false;
  const LinearForm form = linearize(simplify(first));
  bool even = form.constant % 2 == 0 && lane_stride % 2 == 0;
  for (const LinearForm::Term& term : form.terms) even = even && term.coef % 2 == 0;
  for (size_t axis = 1; axis < strides.size(); ++axis) even = even && strides[axis] % 2 == 0;
  return even;
}

// Whether a warp row's lanes load a 16-bit lhs fragment as 8 x 8 matrices (ldmatrix.x4, whose
// rows are 16 bytes, aligned, in shared memory): its pairs are words (loads_word_pairs), and
// the first element of every lane and iteration, its rows (the other axes' strides) and k = 8
// are at multiples of 8 elements of a buffer the launch aligns to 16 bytes.
bool loads_matrices(const Buffer& b, const Expr& first, const std::vector<int64_t>& strides) {
  constexpr int64_t kRowElements = 8;
  if (!loads_word_pairs(b, first, strides, 0)) return false;
  const LinearForm form = linearize(simplify(first));
  bool aligned = form.constant % kRowElements == 0;
  for (const LinearForm::Term& term : form.terms) aligned = aligned && term.coef % kRowElements == 0;
  for (size_t axis = 1; axis < strides.size(); ++axis) aligned = aligned && strides[axis] % kRowElements == 0;
  return aligned;
}

}  // namespace

std::optional<TensorCall> match_tensor_call(const LoweredKernel& kernel, const ForNode& loop, const std::vector<const TensorIntrinsic*>& rows,
                                            const WarpContext& warp) {
  std::optional<Nest> nest = rows.empty() ? std::nullopt : perfect_nest(loop);
  if (!nest) return std::nullopt;
  const StoreNode& st = *nest->store;
  const Buffer* out = kernel.find_buffer(st.buffer);
  auto* sum = st.value->as<BinaryNode>();
  if (!out || !sum || sum->op != BinaryOp::Add) return std::nullopt;
  // out[o] = out[o] + product, in either order.
  auto is_self = [&](const Expr& e) {
    auto* l = e->as<LoadNode>();
    if (!l || l->tensor != st.buffer || l->indices.size() != st.indices.size()) return false;
    for (size_t d = 0; d < st.indices.size(); ++d)
      if (!structural_equal(l->indices[d], st.indices[d])) return false;
    return true;
  };
  const Expr product = is_self(sum->a) ? sum->b : is_self(sum->b) ? sum->a : nullptr;
  auto* mul = product ? product->as<BinaryNode>() : nullptr;
  if (!mul || mul->op != BinaryOp::Mul) return std::nullopt;
  std::optional<Factor> p = factor_of(mul->a, out->dtype, *nest), q = factor_of(mul->b, out->dtype, *nest);
  if (!p || !q) return std::nullopt;
  const bool warp_rows = warp.thread && warp.threads > 0 && warp.threads % 32 == 0;
  for (const TensorIntrinsic* row : rows) {
    const bool warp_row = row->warp_m_tiles > 0;
    if (!has_extents(*row, *nest) || row->out.dtype != out->dtype || (warp_row && !warp_rows)) continue;
    std::optional<std::vector<int64_t>> out_strides = strides_of(*out, st.indices, *nest, row->out.strides);
    if (!out_strides) continue;
    for (const auto& [l, r] : {std::pair{&*p, &*q}, std::pair{&*q, &*p}}) {
      const Buffer* lb = kernel.find_buffer(l->load->tensor);
      const Buffer* rb = kernel.find_buffer(r->load->tensor);
      if (!lb || !rb || lb->dtype != row->lhs.dtype || rb->dtype != row->rhs.dtype) continue;
      if (l->tf32 != row->tf32_operands || r->tf32 != row->tf32_operands) continue;
      std::optional<std::vector<int64_t>> lhs_strides = strides_of(*lb, l->load->indices, *nest, row->lhs.strides);
      std::optional<std::vector<int64_t>> rhs_strides = strides_of(*rb, r->load->indices, *nest, row->rhs.strides);
      if (!lhs_strides || !rhs_strides) continue;
      TensorCall call;
      call.intrinsic = row;
      call.shape = {nest->extents, *lhs_strides, *rhs_strides, *out_strides};
      call.lhs = first_element(lb->name, l->load->indices, *nest);
      call.rhs = first_element(rb->name, r->load->indices, *nest);
      call.out = first_element(out->name, st.indices, *nest);
      for (const Factor* f : {l, r})
        for (const Expr& c : f->conditions) call.guard = call.guard ? logical_and(call.guard, c) : c;
      if (warp_row) {
        if (call.guard && uses_var(call.guard, warp.thread)) continue;
        const Expr lhs_first = flat_index(*lb, call.lhs.indices), rhs_first = flat_index(*rb, call.rhs.indices);
        const std::optional<int64_t> lane_stride = warp_fragments_laid_out(lhs_first, rhs_first, warp);
        if (!lane_stride) continue;
        call.shape.rhs_lane_stride = *lane_stride;
        call.shape.lhs_word_pairs = loads_word_pairs(*lb, lhs_first, call.shape.lhs_strides, {});
        call.shape.lhs_matrices = loads_matrices(*lb, lhs_first, call.shape.lhs_strides);
        call.shape.rhs_word_pairs = loads_word_pairs(*rb, rhs_first, call.shape.rhs_strides, *lane_stride);
      }
      return call;
    }
  }
  return std::nullopt;
}

}  // namespace ansor
