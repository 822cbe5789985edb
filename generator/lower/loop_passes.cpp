// Unrolling, unit loops, vector legality and buffer placement.
#include "lower/loop_passes.h"

#include <algorithm>
#include <bit>

#include "ir/arith.h"

namespace ansor {

namespace {

// Statements of the body after full unrolling; kNotUnrollable once an inner loop stays a loop.
constexpr int64_t kNotUnrollable = INT64_MAX / 4;

int64_t steps_times(int64_t extent, int64_t steps) {
  int64_t product;
  return __builtin_mul_overflow(extent, steps, &product) ? kNotUnrollable : std::min(product, kNotUnrollable);
}

Stmt auto_unroll(const Stmt& s, int max_steps, int64_t& steps) {
  switch (s->kind) {
    case StmtKind::Store:
    case StmtKind::Barrier: steps = 1; return s;
    case StmtKind::Seq: {
      steps = 0;
      std::vector<Stmt> out;
      for (auto& x : s->as<SeqNode>()->stmts) {
        int64_t n;
        out.push_back(auto_unroll(x, max_steps, n));
        steps = std::min(kNotUnrollable, steps + n);
      }
      return make_seq(std::move(out));
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      int64_t a = 0, b = 0;
      Stmt t = auto_unroll(i->then_case, max_steps, a);
      Stmt e = i->else_case ? auto_unroll(i->else_case, max_steps, b) : nullptr;
      steps = std::min(kNotUnrollable, a + b);
      return std::make_shared<IfThenElseNode>(i->cond, t, e, i->role);
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      return make_allocate(a->buffer, auto_unroll(a->body, max_steps, steps));
    }
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      if (f->for_kind == ForKind::Tensorized) {  // one call, whose loops stay as they are
        steps = 1;
        return s;
      }
      int64_t inner;
      Stmt body = auto_unroll(f->body, max_steps, inner);
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
      return f->for_kind == kind ? make_for_like(*f, body) : make_for(f->var, f->extent, kind, body, f->binding);
    }
  }
  steps = kNotUnrollable;
  return s;
}

// Statements of s as written out (loops count once plus their body).
int64_t written_statements(const Stmt& s, int64_t cap) {
  switch (s->kind) {
    case StmtKind::Store:
    case StmtKind::Barrier: return 1;
    case StmtKind::Allocate: return written_statements(s->as<AllocateNode>()->body, cap);
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      return std::min(cap, 1 + written_statements(i->then_case, cap) + (i->else_case ? written_statements(i->else_case, cap) : 0));
    }
    case StmtKind::Seq: {
      int64_t n = 0;
      for (auto& x : s->as<SeqNode>()->stmts) n = std::min(cap, n + written_statements(x, cap));
      return n;
    }
    case StmtKind::For: return std::min(cap, 1 + written_statements(s->as<ForNode>()->body, cap));
  }
  return 1;
}

// Elements one copy of s computes: a statement counts once per lane of the vector loops and
// per iteration of the loops the compiler unrolls around it; other loops are written once.
int64_t unrolled_elements(const Stmt& s, int64_t cap) {
  switch (s->kind) {
    case StmtKind::Store:
    case StmtKind::Barrier: return 1;
    case StmtKind::Allocate: return unrolled_elements(s->as<AllocateNode>()->body, cap);
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      return std::min(cap, unrolled_elements(i->then_case, cap) + (i->else_case ? unrolled_elements(i->else_case, cap) : 0));
    }
    case StmtKind::Seq: {
      int64_t n = 0;
      for (auto& x : s->as<SeqNode>()->stmts) n = std::min(cap, n + unrolled_elements(x, cap));
      return n;
    }
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      int64_t body = unrolled_elements(f->body, cap);
      bool copied = f->for_kind == ForKind::Unrolled || f->for_kind == ForKind::Vectorized || f->for_kind == ForKind::VectorizeHint;
      return copied ? std::min(cap, steps_times(f->extent, body)) : body;
    }
  }
  return 1;
}

class VectorLegalizer {
 public:
  explicit VectorLegalizer(const LoweredKernel& kernel) : kernel_(kernel) {}

  Stmt run(const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (!f) return map_children(s, [this](const Stmt& x) { return run(x); });
    ranges_[f->var.get()] = Interval::range(f->extent);
    Stmt body = run(f->body);
    if (f->for_kind != ForKind::Vectorized || f->masked() || legal(f->extent, body, f->var.get())) return make_for_like(*f, body);
    if (Stmt masked = masked_vector(*f, body)) return masked;
    return make_for(f->var, f->extent, ForKind::VectorizeHint, body, f->binding);
  }

 private:
  bool legal(int64_t lanes, const Stmt& body, const VarNode* v) const {
    return lanes >= 2 && lanes <= kMaxVectorLanes && std::has_single_bit(static_cast<uint64_t>(lanes)) && vectorizable(body, v);
  }

  // The vector loop f as a masked vector loop of the next power of two lanes, when its lanes
  // are a prefix of those: f's extent is not a power of two (a ragged tile's last vector,
  // shortened), or its body is guarded by a condition that holds for lanes 0 .. n - 1 only, n
  // a count known at run time (a ragged tile's vector inside loops the tail peeler does not
  // see through). The conjuncts of the guard that do not depend on the lanes stay a guard of
  // the body. Null where neither is so or the body has no vector form.
  Stmt masked_vector(const ForNode& f, const Stmt& body) {
    const int64_t width = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(f.extent)));
    if (f.extent < 2 || width > kMaxVectorLanes) return nullptr;
    const VarNode* v = f.var.get();
    Expr count = width != f.extent ? int_imm(f.extent) : nullptr;
    Stmt lanes_body = body;
    auto* guard = body->as<IfThenElseNode>();
    if (guard && !guard->else_case && uses_var(guard->cond, v)) {
      std::vector<Expr> conjuncts, kept;
      split_conjuncts(guard->cond, conjuncts);
      for (const Expr& c : conjuncts) {
        if (!uses_var(c, v)) {
          kept.push_back(c);
          continue;
        }
        Expr n = lanes_below(c, v);
        if (!n) return nullptr;
        count = count ? min_of(count, n) : n;
      }
      Expr rest;
      for (const Expr& c : kept) rest = rest ? logical_and(rest, c) : c;
      lanes_body = rest ? make_if(rest, guard->then_case) : guard->then_case;
    }
    if (!count) return nullptr;
    count = simplify(max_of(int_imm(0), min_of(count, int_imm(f.extent))), ranges_);
    ranges_[v] = Interval::range(width);
    if (!vectorizable(lanes_body, v)) return nullptr;
    if (is_const_int(count, width)) return make_for(f.var, width, ForKind::Vectorized, lanes_body, f.binding);
    return std::make_shared<ForNode>(f.var, width, ForKind::Vectorized, f.binding, lanes_body, count);
  }

  // For a comparison c that holds exactly for v < n (v + r < 0, v + r <= 0 or the mirrored
  // forms, r not depending on v), n; else null.
  static Expr lanes_below(const Expr& c, const VarNode* v) {
    auto* b = c->as<BinaryNode>();
    if (!b || !dtype_is_int(b->a->dtype) || !dtype_is_int(b->b->dtype)) return nullptr;
    const bool upper = b->op == BinaryOp::LT || b->op == BinaryOp::LE;
    const bool strict = b->op == BinaryOp::LT || b->op == BinaryOp::GT;
    if (!upper && b->op != BinaryOp::GT && b->op != BinaryOp::GE) return nullptr;
    LinearForm diff = linearize(upper ? sub(b->a, b->b) : sub(b->b, b->a));
    LinearForm rest;
    rest.constant = diff.constant - (strict ? 0 : 1);
    bool lane_term = false;
    for (const LinearForm::Term& t : diff.terms) {
      if (!uses_var(t.atom, v)) {
        rest.terms.push_back({t.atom, -t.coef});
      } else if (t.atom->as<VarNode>() == v && t.coef == 1) {
        lane_term = true;
      } else {
        return nullptr;
      }
    }
    if (!lane_term) return nullptr;
    rest.constant = -rest.constant;
    return from_linear(rest);
  }

  bool vectorizable(const Stmt& s, const VarNode* v) const {
    switch (s->kind) {
      case StmtKind::Store: {
        auto* st = s->as<StoreNode>();
        const Buffer* b = kernel_.find_buffer(st->buffer);
        if (!b || b->dtype == DType::Bool) return false;
        // Each lane must store its own element, or updates of one element would be lost.
        std::optional<int64_t> coef = linear_coefficient(simplify(flat_index(*b, st->indices), ranges_), v);
        return coef && *coef != 0;
      }
      case StmtKind::Seq:
        for (auto& x : s->as<SeqNode>()->stmts)
          if (!vectorizable(x, v)) return false;
        return true;
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        return !uses_var(i->cond, v) && vectorizable(i->then_case, v) && (!i->else_case || vectorizable(i->else_case, v));
      }
      default: return false;
    }
  }

  const LoweredKernel& kernel_;
  RangeMap ranges_;
};

// Whether loop f folds the elements of a local buffer into one accumulator,
// A[c] = A[c] op B[..f..] with op a reduction's combining operation and c not depending on f:
// the partial results a vectorised rfactor leaves, combined at the end of the reduction.
bool combines_local_partial_results(const LoweredKernel& kernel, const ForNode& f) {
  auto* st = f.body->as<StoreNode>();
  std::optional<AccumulationStep> step = st ? accumulation_step(*st) : std::nullopt;
  if (!step) return false;
  for (const Expr& index : st->indices)
    if (uses_var(index, f.var.get())) return false;
  const LoadNode& operand = *step->operand;
  const Buffer* partial = kernel.find_buffer(operand.tensor);
  return partial && partial->scope == BufferScope::Local &&
         std::any_of(operand.indices.begin(), operand.indices.end(), [&](const Expr& e) { return uses_var(e, f.var.get()); });
}

// Peels the iterations of a serial loop whose vectorized inner loop is guarded per lane (the
// ragged tail of a split by the vector length): the iterations where the guard provably holds
// for every lane run the vector loop without it, the rest (usually one) keep the guard.
class VectorTailPeeler {
 public:
  Stmt run(const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (!f) return map_children(s, [this](const Stmt& x) { return run(x); });
    ranges_[f->var.get()] = Interval::range(f->extent);
    Stmt body = run(f->body);
    Stmt loop = make_for_like(*f, body);
    auto* lanes = body->as<ForNode>();
    if (f->for_kind != ForKind::Serial || !lanes || lanes->for_kind != ForKind::Vectorized || lanes->masked()) return loop;
    auto* guard = lanes->body->as<IfThenElseNode>();
    if (!guard || guard->else_case || !uses_var(guard->cond, lanes->var.get())) return loop;
    ranges_[lanes->var.get()] = Interval::range(lanes->extent);
    const int64_t full = guarded_prefix(*f, guard->cond);
    ranges_[f->var.get()] = Interval::range(f->extent);
    if (full == 0 || full == f->extent) return loop;
    Stmt unguarded = make_for(f->var, full, ForKind::Serial, make_for(lanes->var, lanes->extent, ForKind::Vectorized, guard->then_case, lanes->binding));
    Stmt tail = remove_unit_loops(make_for(f->var, f->extent - full, ForKind::Serial, substitute(body, {{f->var.get(), add(f->var, int_imm(full))}})));
    return make_seq({unguarded, shorten_last_vector(tail)});
  }

 private:
  // The last vector alone, guarded lane by lane, becomes the lanes its guard lets through
  // when they are a prefix: for (v < 32) if (v + 992 < 1000) ... is for (v < 8) ....
  Stmt shorten_last_vector(const Stmt& tail) {
    auto* lanes = tail->as<ForNode>();
    if (!lanes || lanes->for_kind != ForKind::Vectorized) return tail;
    auto* guard = lanes->body->as<IfThenElseNode>();
    if (!guard || guard->else_case) return tail;
    const int64_t n = guarded_prefix(*lanes, guard->cond);
    ranges_[lanes->var.get()] = Interval{n, lanes->extent - 1};
    const bool rest_fails = n > 0 && is_const_int(simplify(guard->cond, ranges_), 0);
    ranges_[lanes->var.get()] = Interval::range(lanes->extent);
    return rest_fails ? make_for(lanes->var, n, ForKind::Vectorized, guard->then_case, lanes->binding) : tail;
  }

  // The most iterations 0 .. n - 1 of f for which cond is provably true (cond only gets
  // harder to satisfy as f grows: the tail's guard).
  int64_t guarded_prefix(const ForNode& f, const Expr& cond) {
    int64_t lo = 0, hi = f.extent;
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      ranges_[f.var.get()] = Interval::range(mid);
      if (can_prove(cond, ranges_)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  RangeMap ranges_;
};

Stmt unroll_partial_result_combines(const LoweredKernel& kernel, const Stmt& s) {
  Stmt out = map_children(s, [&](const Stmt& x) { return unroll_partial_result_combines(kernel, x); });
  auto* f = out->as<ForNode>();
  if (!f || f->for_kind != ForKind::Serial || f->extent > kMaxCombinedPartialResults || !combines_local_partial_results(kernel, *f))
    return out;
  return make_for(f->var, f->extent, ForKind::Unrolled, f->body, f->binding);
}

}  // namespace

Stmt apply_auto_unroll(const Stmt& s, int max_steps) {
  int64_t steps;
  return auto_unroll(s, max_steps, steps);
}

Stmt remove_unit_loops(const Stmt& s) {
  auto* f = s->as<ForNode>();
  // A tensorized loop of one iteration stays: it is one call (of one step, for AMX).
  if (f && f->extent == 1 && f->for_kind != ForKind::ThreadBinding && f->for_kind != ForKind::Tensorized)
    return remove_unit_loops(substitute(f->body, {{f->var.get(), int_imm(0)}}));
  return map_children(s, [](const Stmt& x) { return remove_unit_loops(x); });
}

Stmt expand_unrolled_loops(const Stmt& s, int64_t max_statements, int64_t max_elements) {
  Stmt out = map_children(s, [&](const Stmt& x) { return expand_unrolled_loops(x, max_statements, max_elements); });
  auto* f = out->as<ForNode>();
  if (!f || f->for_kind != ForKind::Unrolled) return out;
  int64_t body = written_statements(f->body, max_statements + 1);
  if (steps_times(f->extent, body) > max_statements) return out;
  if (steps_times(f->extent, unrolled_elements(f->body, max_elements + 1)) > max_elements) return out;
  std::vector<Stmt> copies;
  for (int64_t i = 0; i < f->extent; ++i) copies.push_back(substitute(f->body, {{f->var.get(), int_imm(i)}}));
  return make_seq(std::move(copies));
}

namespace {

class GuardDecider {
 public:
  Stmt run(const Stmt& s) {
    if (auto* f = s->as<ForNode>()) {
      ranges_[f->var.get()] = Interval::range(f->extent);
      Stmt body = run(f->body);
      ranges_.erase(f->var.get());
      return make_for_like(*f, body);
    }
    Stmt out = map_children(s, [this](const Stmt& x) { return run(x); });
    auto* i = out->as<IfThenElseNode>();
    if (!i) return out;
    const Expr cond = simplify(i->cond, ranges_);
    if (is_const_int(cond, 1)) return i->then_case;
    if (is_const_int(cond, 0)) return i->else_case ? i->else_case : make_seq({});
    return out;
  }

 private:
  RangeMap ranges_;
};

}  // namespace

Stmt decide_guards(const Stmt& s) { return GuardDecider().run(s); }

Stmt legalize_vector_loops(const LoweredKernel& kernel, const Stmt& s) { return VectorLegalizer(kernel).run(s); }

void place_local_buffers(LoweredKernel& kernel, int64_t max_stack_bytes) {
  for (Buffer& b : kernel.buffers)
    if (b.scope == BufferScope::Local && b.num_elements() * dtype_bytes(b.dtype) > max_stack_bytes) b.scope = BufferScope::LocalHeap;
}

void finish_loop_program(LoweredKernel& kernel, bool expand_unrolled) {
  kernel.body = remove_unit_loops(kernel.body);
  kernel.body = unroll_partial_result_combines(kernel, kernel.body);
  // Peeled first: an unswitch in the loop around a vector loop would hide the pattern.
  kernel.body = VectorTailPeeler().run(kernel.body);
  if (expand_unrolled) kernel.body = decide_guards(expand_unrolled_loops(unswitch_ragged_guards(kernel.body)));
  kernel.body = legalize_vector_loops(kernel, kernel.body);
  place_local_buffers(kernel);
  for (LoweredKernel& packer : kernel.packers) finish_loop_program(packer, expand_unrolled);
}

}  // namespace ansor
