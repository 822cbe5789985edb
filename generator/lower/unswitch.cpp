// Unswitching the guards of ragged tiles: see unswitch_ragged_guards in loop_passes.h.
#include <algorithm>
#include <optional>
#include <vector>

#include "ir/arith.h"
#include "lower/loop_passes.h"

namespace ansor {

namespace {

// An unswitch copies the loop body it is placed in; tiles ragged along several axes get one per
// axis, nested. Past this many per kernel the remaining guards stay where they are.
constexpr int kMaxUnswitches = 8;

struct InnerLoop {
  const VarNode* var;
  int64_t extent;
  bool lanes;  // a compiler-vectorized loop's or a GPU binding's: guards on it are not unswitched
};

bool is_integer_comparison(const Expr& c) {
  auto* b = c->as<BinaryNode>();
  if (!b || !dtype_is_int(b->a->dtype) || !dtype_is_int(b->b->dtype)) return false;
  return b->op == BinaryOp::LT || b->op == BinaryOp::LE || b->op == BinaryOp::GT || b->op == BinaryOp::GE;
}

// The condition under which comparison c holds for every value of the inner loops (each from 0
// to its extent - 1): c at the inner values where its left side minus its right side is
// largest (for < and <=) or smallest (> and >=). Nothing when that difference is not linear in
// the inner loops' variables.
std::optional<Expr> holds_for_all(const Expr& c, const std::vector<InnerLoop>& inner) {
  auto* b = c->as<BinaryNode>();
  const bool upper = b->op == BinaryOp::LT || b->op == BinaryOp::LE;
  const LinearForm diff = linearize(sub(b->a, b->b));
  VarMap extreme;
  for (const InnerLoop& loop : inner) {
    for (const LinearForm::Term& t : diff.terms) {
      if (!uses_var(t.atom, loop.var)) continue;
      if (t.atom->as<VarNode>() != loop.var) return std::nullopt;  // inside a division, a load, ...
      const bool at_max = (t.coef > 0) == upper;
      extreme.emplace_back(loop.var, int_imm(at_max ? loop.extent - 1 : 0));
    }
  }
  return substitute(c, extreme);
}

// Calls f on each statement directly inside s.
template <class F>
void for_each_child(const Stmt& s, F f) {
  switch (s->kind) {
    case StmtKind::For: f(s->as<ForNode>()->body); return;
    case StmtKind::Allocate: f(s->as<AllocateNode>()->body); return;
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      f(i->then_case);
      if (i->else_case) f(i->else_case);
      return;
    }
    case StmtKind::Seq:
      for (const Stmt& x : s->as<SeqNode>()->stmts) f(x);
      return;
    case StmtKind::Store:
    case StmtKind::Barrier: return;
  }
}

class GuardUnswitcher {
 public:
  Stmt run(const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (!f) return map_children(s, [this](const Stmt& x) { return run(x); });
    ranges_[f->var.get()] = Interval::range(f->extent);
    Stmt body;
    std::optional<Unswitched> u = unswitch(*f);
    if (!u) {
      body = run(f->body);
    } else if (!u->condition) {
      body = run(drop_guards(f->body, u->implied));
    } else {
      body = split_where_guarded(f->body, *u);
    }
    ranges_.erase(f->var.get());
    return make_for_like(*f, body);
  }

 private:
  struct Candidate {
    Expr guard;      // a conjunct of a guard inside the body
    Expr condition;  // under which it holds on every iteration of the loops inside the body
  };

  struct Unswitched {
    Expr condition;             // null: the guards hold on every iteration
    std::vector<Expr> implied;  // the guards the condition implies
  };

  // The guards inside f's body that depend on f's variable and on loops inside the body (vector
  // lanes included: those the vector tail peeler could not peel, inside unrolled register
  // tiles; the slow copy masks them), with the condition under
  // which they all hold for a whole iteration of f. Serial and parallel loops only: inside an
  // unrolled loop the copies would be written out once per iteration.
  std::optional<Unswitched> unswitch(const ForNode& f) {
    if ((f.for_kind != ForKind::Serial && f.for_kind != ForKind::Parallel) || unswitches_ >= kMaxUnswitches ||
        has_block_synchronization(f.body))
      return std::nullopt;
    std::vector<Candidate> found;
    std::vector<InnerLoop> inner;
    collect(f.body, f, inner, found);
    Unswitched u;
    std::vector<Expr> conditions;
    for (const Candidate& c : found) {
      Expr condition = simplify(c.condition, ranges_);
      if (is_const_int(condition, 0)) continue;
      u.implied.push_back(c.guard);
      if (is_const_int(condition, 1)) continue;
      if (std::none_of(conditions.begin(), conditions.end(), [&](const Expr& e) { return structural_equal(e, condition); }))
        conditions.push_back(condition);
    }
    if (u.implied.empty()) return std::nullopt;
    for (const Expr& c : conditions) u.condition = u.condition ? logical_and(u.condition, c) : c;
    if (u.condition) ++unswitches_;
    return u;
  }

  // The fast and the slow copy of the smallest part of s that holds every guard u stands for:
  // loops, allocations and statements beside that part stay single, so a tile whose accumulators
  // are computed unguarded gets two copies of its copy-out only. u's condition does not depend
  // on the loops inside f, so it holds wherever inside them it is tested.
  Stmt split_where_guarded(const Stmt& s, const Unswitched& u) {
    auto* loop = s->as<ForNode>();
    if (loop && shares_unguarded_part(s, u.implied)) {
      ranges_[loop->var.get()] = Interval::range(loop->extent);
      Stmt body = split_where_guarded(loop->body, u);
      ranges_.erase(loop->var.get());
      return make_for_like(*loop, body);
    }
    auto* a = s->as<AllocateNode>();
    if (a && shares_unguarded_part(s, u.implied)) return make_allocate(a->buffer, split_where_guarded(a->body, u));
    if (auto* seq = s->as<SeqNode>(); seq && shares_unguarded_part(s, u.implied)) {
      std::vector<Stmt> parts;
      for (const Stmt& x : seq->stmts) parts.push_back(holds_guard(x, u.implied) ? split_where_guarded(x, u) : run(x));
      return make_seq(std::move(parts));
    }
    Stmt fast = run(drop_guards(s, u.implied));
    // The guards the condition stands for fail somewhere in the slow copy: they are not
    // unswitched again inside it.
    const size_t settled = settled_.size();
    settled_.insert(settled_.end(), u.implied.begin(), u.implied.end());
    Stmt slow = run(s);
    settled_.resize(settled);
    return make_if(u.condition, fast, slow);
  }

  // Whether s holds statements beside its only part with `guards` that need no copy: through
  // serial and parallel loops and allocations, down to a sequence with exactly one guarded part.
  static bool shares_unguarded_part(const Stmt& s, const std::vector<Expr>& guards) {
    if (auto* loop = s->as<ForNode>())
      return (loop->for_kind == ForKind::Serial || loop->for_kind == ForKind::Parallel) && shares_unguarded_part(loop->body, guards);
    if (auto* a = s->as<AllocateNode>()) return shares_unguarded_part(a->body, guards);
    auto* seq = s->as<SeqNode>();
    if (!seq) return false;
    const auto guarded = [&](const Stmt& x) { return holds_guard(x, guards); };
    return std::count_if(seq->stmts.begin(), seq->stmts.end(), guarded) == 1 && seq->stmts.size() > 1;
  }

  // Whether a guard inside s has a conjunct among `guards`.
  static bool holds_guard(const Stmt& s, const std::vector<Expr>& guards) {
    bool found = false;
    for_each_stmt(s, [&](const Stmt& x) {
      auto* i = x->as<IfThenElseNode>();
      if (found || !i || i->else_case || i->role != CondRole::Domain) return;
      std::vector<Expr> conjuncts;
      split_conjuncts(i->cond, conjuncts);
      found = std::any_of(conjuncts.begin(), conjuncts.end(), [&](const Expr& c) {
        return std::any_of(guards.begin(), guards.end(), [&](const Expr& g) { return structural_equal(g, c); });
      });
    });
    return found;
  }

  void collect(const Stmt& s, const ForNode& f, std::vector<InnerLoop>& inner, std::vector<Candidate>& found) const {
    if (auto* loop = s->as<ForNode>()) {
      const bool lanes = loop->for_kind == ForKind::VectorizeHint || loop->for_kind == ForKind::ThreadBinding;
      inner.push_back({loop->var.get(), loop->extent, lanes});
      collect(loop->body, f, inner, found);
      inner.pop_back();
      return;
    }
    if (auto* i = s->as<IfThenElseNode>(); i && !i->else_case && i->role == CondRole::Domain) {
      std::vector<Expr> conjuncts;
      split_conjuncts(i->cond, conjuncts);
      for (const Expr& c : conjuncts) {
        if (!is_integer_comparison(c) || !uses_var(c, f.var.get()) || is_settled(c)) continue;
        // A guard that no loop inside the body changes is left to the compiler's own unswitching.
        if (std::none_of(inner.begin(), inner.end(), [&](const InnerLoop& l) { return uses_var(c, l.var); })) continue;
        if (std::any_of(inner.begin(), inner.end(), [&](const InnerLoop& l) { return l.lanes && uses_var(c, l.var); })) continue;
        if (std::optional<Expr> condition = holds_for_all(c, inner)) found.push_back({c, *condition});
      }
    }
    for_each_child(s, [&](const Stmt& x) { collect(x, f, inner, found); });
  }

  bool is_settled(const Expr& c) const {
    return std::any_of(settled_.begin(), settled_.end(), [&](const Expr& e) { return structural_equal(e, c); });
  }

  // s with every guard conjunct structurally equal to one of `implied` removed.
  static Stmt drop_guards(const Stmt& s, const std::vector<Expr>& implied) {
    Stmt out = map_children(s, [&](const Stmt& x) { return drop_guards(x, implied); });
    auto* i = out->as<IfThenElseNode>();
    if (!i || i->else_case) return out;
    std::vector<Expr> conjuncts, kept;
    split_conjuncts(i->cond, conjuncts);
    for (const Expr& c : conjuncts)
      if (std::none_of(implied.begin(), implied.end(), [&](const Expr& e) { return structural_equal(e, c); })) kept.push_back(c);
    if (kept.size() == conjuncts.size()) return out;
    if (kept.empty()) return i->then_case;
    Expr cond = kept[0];
    for (size_t k = 1; k < kept.size(); ++k) cond = logical_and(cond, kept[k]);
    return make_if(cond, i->then_case, nullptr, i->role);
  }

  RangeMap ranges_;
  std::vector<Expr> settled_;
  int unswitches_ = 0;
};

}  // namespace

Stmt unswitch_ragged_guards(const Stmt& s) { return GuardUnswitcher().run(s); }

}  // namespace ansor
