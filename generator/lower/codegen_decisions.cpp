// The target-dependent decisions of lowering.
#include "lower/codegen_decisions.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>

#include "ir/arith.h"
#include "lower/gpu_launch.h"
#include "lower/shared_layout.h"
#include "lower/tensorize.h"

namespace ansor {

namespace {

// 32-bit where every buffer and loop fits.
DType gpu_index_dtype(const LoweredKernel& k) {
  bool fits = true;
  for (const Buffer& b : k.buffers) fits = fits && b.num_elements() < INT32_MAX;
  for_each_stmt(k.body, [&fits](const Stmt& s) {
    if (auto* f = s->as<ForNode>()) fits = fits && f->extent < INT32_MAX;
  });
  return fits ? DType::I32 : DType::I64;
}

// Walks a program in the order a code generator prints it, with the ranges of the loops entered
// so far: the ranges index arithmetic is simplified under, so that what is decided here is what
// is printed.
class DecisionWalker {
 public:
  explicit DecisionWalker(LoweredKernel& k) : kernel_(k) {}

  // GPU: the vectorized loops that copy 2 to 8 consecutive elements of 2 or 4 bytes, one access of
  // 4, 8 or 16 bytes, from a first element at a multiple of the lanes (so that both addresses are
  // aligned to the vector wherever the buffers are).
  void find_vector_copies(const Stmt& s) {
    for_each_stmt(s, [this](const Stmt& x) {
      auto* f = x->as<ForNode>();
      if (!f) return;
      ranges_[f->var.get()] = Interval::range(f->extent);
      if (f->for_kind != ForKind::Vectorized) return;
      if (std::optional<VectorCopy> copy = vector_copy(*f)) kernel_.vector_copies[f] = *copy;
    });
  }

  // CPU: the runs of accumulation steps in the sequences a C++ generator prints statement by
  // statement (not the bodies of vector loops, which are vector statements).
  void find_horizontal_reductions(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        ranges_[f->var.get()] = Interval::range(f->extent);
        if (f->for_kind != ForKind::Vectorized) find_horizontal_reductions(f->body);
        return;
      }
      case StmtKind::Seq: {
        const std::vector<Stmt>& stmts = s->as<SeqNode>()->stmts;
        for (size_t i = 0; i < stmts.size();) {
          const size_t n = horizontal_reduction_length(stmts, i);
          if (n >= kMinHorizontalReduction) {
            kernel_.horizontal_reductions[stmts[i].get()] = n;
            i += n;
          } else {
            find_horizontal_reductions(stmts[i++]);
          }
        }
        return;
      }
      case StmtKind::Allocate: find_horizontal_reductions(s->as<AllocateNode>()->body); return;
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        find_horizontal_reductions(i->then_case);
        if (i->else_case) find_horizontal_reductions(i->else_case);
        return;
      }
      case StmtKind::Store:
      case StmtKind::Barrier: return;
    }
  }

 private:
  const Buffer& buffer(const std::string& name) const { return *kernel_.find_buffer(name); }
  Expr flat_expr(const Buffer& b, const std::vector<Expr>& indices) const { return simplify(flat_index(b, indices), ranges_); }

  std::optional<VectorCopy> vector_copy(const ForNode& f) const {
    auto* st = f.body->as<StoreNode>();
    Expr value = st && !st->across_threads ? st->value : nullptr;
    // A shared copy's fetch stores zeros past its tensor's edges (lower.cpp).
    Expr copies_if;
    if (auto* sel = value ? value->as<SelectNode>() : nullptr; sel && is_const_zero(sel->false_value)) {
      copies_if = same_on_every_lane(sel->cond, f);
      if (!copies_if) return std::nullopt;
      value = sel->true_value;
    }
    auto* load = value ? value->as<LoadNode>() : nullptr;
    if (!load || f.masked() || (f.extent != 2 && f.extent != 4 && f.extent != 8)) return std::nullopt;
    const Buffer& to = buffer(st->buffer);
    const Buffer& from = buffer(load->tensor);
    const int64_t elem = dtype_bytes(to.dtype);
    if ((elem != 2 && elem != 4) || f.extent * elem > kVectorCopyMaxBytes || to.dtype != from.dtype) return std::nullopt;
    const Expr to_index = flat_expr(to, st->indices), from_index = flat_expr(from, load->indices);
    const VarNode* lane = f.var.get();
    if (linear_coefficient(to_index, lane) != 1 || linear_coefficient(from_index, lane) != 1) return std::nullopt;
    if (!multiple_of_lanes(on_first_lane(to_index, f), f) || !multiple_of_lanes(on_first_lane(from_index, f), f)) return std::nullopt;
    return VectorCopy{static_cast<int>(f.extent), to.scope == BufferScope::Param || from.scope == BufferScope::Param, copies_if};
  }

  // e with vector loop f's lane at 0.
  Expr on_first_lane(const Expr& e, const ForNode& f) const { return simplify(substitute(e, {{f.var.get(), int_imm(0)}}), ranges_); }

  // Whether e is a multiple of f's lanes whatever the loops' values: its constant and every
  // coefficient are.
  static bool multiple_of_lanes(const Expr& e, const ForNode& f) {
    const LinearForm form = linearize(e);
    bool multiple = form.constant % f.extent == 0;
    for (const LinearForm::Term& t : form.terms) multiple = multiple && t.coef % f.extent == 0;
    return multiple;
  }

  // `cond` written without vector loop f's lane, where it has the same value on every lane:
  // each conjunct that uses the lane compares lane + x, with x a multiple of the lanes, to a
  // multiple of the lanes (an edge between whole vectors), and is decided by x alone. Null where
  // the lanes may differ.
  Expr same_on_every_lane(const Expr& cond, const ForNode& f) const {
    const VarNode* lane = f.var.get();
    std::vector<Expr> conjuncts;
    split_conjuncts(cond, conjuncts);
    Expr out;
    for (const Expr& c : conjuncts) {
      Expr uniform = c;
      if (uses_var(c, lane)) {
        auto* cmp = c->as<BinaryNode>();
        const int64_t* edge = cmp ? as_const_int(cmp->b) : nullptr;
        if (!cmp || (cmp->op != BinaryOp::LT && cmp->op != BinaryOp::GE) || !edge || *edge % f.extent != 0 ||
            linear_coefficient(cmp->a, lane) != 1)
          return nullptr;
        const Expr first = on_first_lane(cmp->a, f);
        if (!multiple_of_lanes(first, f)) return nullptr;
        uniform = cmp->op == BinaryOp::LT ? lt(first, cmp->b) : ge(first, cmp->b);
      }
      out = out ? logical_and(out, uniform) : uniform;
    }
    return simplify(out, ranges_);
  }

  // The store's combining operation, when it is A[c] = A[c] op B[...] (accumulation_step) with A
  // and B float buffers of one dtype.
  std::optional<AccumulationStep> accumulation(const Stmt& s) const {
    auto* st = s->as<StoreNode>();
    std::optional<AccumulationStep> step = st ? accumulation_step(*st) : std::nullopt;
    if (!step) return std::nullopt;
    const Buffer& target = buffer(st->buffer);
    if (!(target.dtype == DType::F32 || target.dtype == DType::F64) || buffer(step->operand->tensor).dtype != target.dtype) return std::nullopt;
    return step;
  }

  // How many statements from stmts[i] accumulate consecutive elements B[j], B[j + 1], ... into
  // the same A[c] with the same operation.
  size_t horizontal_reduction_length(const std::vector<Stmt>& stmts, size_t i) const {
    std::optional<AccumulationStep> first = accumulation(stmts[i]);
    if (!first) return 0;
    auto* store = stmts[i]->as<StoreNode>();
    const Buffer& source = buffer(first->operand->tensor);
    Expr base = flat_expr(source, first->operand->indices);
    size_t n = 1;
    for (; i + n < stmts.size(); ++n) {
      std::optional<AccumulationStep> next = accumulation(stmts[i + n]);
      if (!next || next->op != first->op || next->operand->tensor != first->operand->tensor) break;
      auto* next_store = stmts[i + n]->as<StoreNode>();
      if (next_store->buffer != store->buffer || next_store->indices.size() != store->indices.size()) break;
      bool same_target = true;
      for (size_t k = 0; k < store->indices.size(); ++k) same_target = same_target && structural_equal(next_store->indices[k], store->indices[k]);
      if (!same_target) break;
      Expr offset = simplify(ansor::binary(BinaryOp::Sub, flat_expr(source, next->operand->indices), base), ranges_);
      if (!is_const_int(offset, static_cast<int64_t>(n))) break;
    }
    return n;
  }

  LoweredKernel& kernel_;
  RangeMap ranges_;
};

// Each tensorized loop's call among the target's intrinsics. A loop that none computes (the
// target lacks the instruction, or a mutation changed the loops' shape) stays the loop nest it
// is, which every code generator prints as plain loops: slower, never wrong. Records that need
// an instruction never replay on a target without it (Target::same_isa).
void find_tensor_calls(LoweredKernel& k, const Target& target) {
  const std::vector<const TensorIntrinsic*> rows = tensor_intrinsics_for(target);
  for_each_stmt(k.body, [&](const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (f && f->for_kind == ForKind::Tensorized)
      if (std::optional<TensorCall> call = match_tensor_call(k, *f, rows)) k.tensor_calls[f] = *call;
  });
}

// A GPU launch's tensorized loops, each with the thread loop around it for the rows a warp calls
// together: those lanes must all reach the call, so the warp context is dropped under a guard on
// the thread (a loop narrower than the block, a condition on the thread's index) and in a block
// that is no whole number of warps along threadIdx.x alone.
void find_gpu_tensor_calls(LoweredKernel& k, const Target& target) {
  const std::vector<const TensorIntrinsic*> rows = tensor_intrinsics_for(target);
  if (rows.empty()) return;
  std::function<void(const Stmt&, WarpContext)> walk = [&](const Stmt& s, WarpContext warp) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        if (f->for_kind == ForKind::Tensorized) {
          if (std::optional<TensorCall> call = match_tensor_call(k, *f, rows, warp)) {
            k.tensor_calls[f] = *call;
            return;
          }
        }
        if (f->for_kind == ForKind::ThreadBinding && f->binding == IterAnnotation::ThreadX)
          warp.thread = warp.threads > 0 && !std::any_of(k.launches.begin(), k.launches.end(), [&](const GpuLaunch& l) { return l.guards(f); })
                            ? f->var.get()
                            : nullptr;
        if (f->masked() && warp.thread && uses_var(f->active_lanes, warp.thread)) warp.thread = nullptr;
        walk(f->body, warp);
        return;
      }
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        if (warp.thread && uses_var(i->cond, warp.thread)) warp.thread = nullptr;
        walk(i->then_case, warp);
        if (i->else_case) walk(i->else_case, warp);
        return;
      }
      case StmtKind::Allocate: walk(s->as<AllocateNode>()->body, warp); return;
      case StmtKind::Seq:
        for (const Stmt& x : s->as<SeqNode>()->stmts) walk(x, warp);
        return;
      case StmtKind::Store:
      case StmtKind::Barrier: return;
    }
  };
  for (const GpuLaunch& launch : k.launches) {
    WarpContext warp;
    if (launch.block[1] == 1 && launch.block[2] == 1 && launch.block[0] % 32 == 0) warp.threads = launch.block[0];
    walk(launch.body, warp);
  }
}

// Launches whose vector copies move kernel arguments are printed for aligned and unaligned
// arguments both.
void mark_aligned_variants(LoweredKernel& k) {
  for (GpuLaunch& launch : k.launches)
    for_each_stmt(launch.body, [&](const Stmt& s) {
      auto* f = s->as<ForNode>();
      const VectorCopy* copy = f ? k.find_vector_copy(f) : nullptr;
      launch.aligned_variants = launch.aligned_variants || (copy && copy->of_arguments);
    });
}

void take_gpu_decisions(LoweredKernel& kernel, const Target& target) {
  kernel.index_dtype = gpu_index_dtype(kernel);
  kernel.launches = gpu_launches(kernel);
  DecisionWalker(kernel).find_vector_copies(kernel.body);
  mark_aligned_variants(kernel);
  find_gpu_tensor_calls(kernel, target);
}

}  // namespace

void take_codegen_decisions(LoweredKernel& kernel, const Target& target) {
  kernel.cache_line_bytes = target.cache_line_bytes;
  if (target.kind == Target::Kind::Cuda) {
    take_gpu_decisions(kernel, target);
    // The layout of shared memory is decided from the accesses the decisions make (vector
    // copies, the tensor calls' fragment loads); the decisions then take the layout into account.
    if (choose_shared_layouts(kernel, target.gpu)) {
      kernel.vector_copies.clear();
      kernel.tensor_calls.clear();
      take_gpu_decisions(kernel, target);
    }
  } else {
    kernel.index_dtype = DType::I64;
    DecisionWalker(kernel).find_horizontal_reductions(kernel.body);
    find_tensor_calls(kernel, target);
  }
  for (LoweredKernel& packer : kernel.packers) take_codegen_decisions(packer, target);
}

}  // namespace ansor
