// Barrier insertion: statements are summarised by the shared buffers they read and write before
// their first barrier and after their last, and sequences place a barrier wherever what follows
// conflicts with what was done since the previous one.
#include "lower/gpu_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "schedule/bound_inference.h"

namespace ansor {

namespace {

bool binds_gpu_index(const ForNode& f) { return f.for_kind == ForKind::ThreadBinding && f.binding != IterAnnotation::VThread; }

// Shared buffers read and written by some statements.
struct Effects {
  std::set<std::string> reads, writes;

  void add(const Effects& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  // Whether `later` running after these without a barrier could race: it reads what these wrote
  // or overwrites what these read. (Writes after writes are of disjoint elements in a lowering.)
  bool conflicts_with(const Effects& later) const { return intersects(later.reads, writes) || intersects(later.writes, reads); }

 private:
  static bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
    return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
  }
};

// A statement seen from its neighbours: the effects before its first barrier (head) and after
// its last (tail) when every thread that runs it passes a barrier; otherwise both are all its
// effects.
struct Summary {
  bool synchronizes = false;
  Effects head, tail;

  static Summary of(const Effects& e) { return {false, e, e}; }
};

// Where in a block a statement is.
struct Scope {
  bool uniform = true;                                 // every thread of the block gets here
  std::array<int64_t, 3> bound_extent = {0, 0, 0};     // per thread index, the enclosing loop's extent (0: none)
  std::unordered_set<const VarNode*> thread_vars;      // variables of enclosing thread-bound loops
  std::array<const VarNode*, 3> bound_var = {nullptr, nullptr, nullptr};
  std::unordered_set<const VarNode*> shadowed;         // thread loop variables whose index an inner loop binds again
};

class BarrierInserter {
 public:
  explicit BarrierInserter(const LoweredKernel& k) {
    for (const Buffer& b : k.buffers)
      if (b.scope == BufferScope::Shared) shared_.insert(b.name);
  }

  // Outside blocks: finds the blocks.
  Stmt rewrite(const Stmt& s) {
    auto* f = s->as<ForNode>();
    if (f && binds_gpu_index(*f)) return rewrite_block(s);
    return map_children(s, [this](const Stmt& x) { return rewrite(x); });
  }

 private:
  // An outermost block-bound loop iterates over blocks, which share nothing; a thread-bound
  // loop outside any is the whole of its block.
  Stmt rewrite_block(const Stmt& s) {
    dims_ = block_thread_dims(s);
    if (dims_[0] * dims_[1] * dims_[2] == 1) return s;  // one thread: nothing to synchronise
    Summary ignored;
    auto* f = s->as<ForNode>();
    if (is_block_index(f->binding)) return make_for_like(*f, visit(f->body, Scope{}, ignored));
    return visit(s, Scope{}, ignored);
  }

  Stmt visit(const Stmt& s, const Scope& scope, Summary& out) {
    switch (s->kind) {
      case StmtKind::For: return visit_for(*s->as<ForNode>(), scope, out);
      case StmtKind::Store: return visit_store(s, scope, out);
      case StmtKind::Allocate: {
        auto* a = s->as<AllocateNode>();
        thread_vars_outside_[a->buffer].assign(scope.thread_vars.begin(), scope.thread_vars.end());
        return make_allocate(a->buffer, visit(a->body, scope, out));
      }
      case StmtKind::IfThenElse: return visit_if(*s->as<IfThenElseNode>(), scope, out);
      case StmtKind::Seq: return visit_seq(s->as<SeqNode>()->stmts, scope, out);
      case StmtKind::Barrier:
        require_uniform(scope);
        out = Summary{true, {}, {}};
        return s;
    }
    return s;
  }

  Stmt visit_for(const ForNode& f, const Scope& scope, Summary& out) {
    int axis = f.for_kind == ForKind::ThreadBinding ? thread_axis(f.binding) : -1;
    if (axis >= 0) {
      Scope inner = scope;
      int64_t enclosing = scope.bound_extent[axis];
      if (enclosing > 0 && enclosing < f.extent)
        throw InvalidState(fmt::format("cannot lower the schedule: loop '{}' ({} threads) is nested in a loop bound to the same thread index "
                                       "with only {}",
                                       f.var->name, f.extent, enclosing));
      if (scope.bound_var[axis]) inner.shadowed.insert(scope.bound_var[axis]);
      inner.bound_extent[axis] = f.extent;
      inner.bound_var[axis] = f.var.get();
      inner.uniform = scope.uniform && f.extent == dims_[axis];
      inner.thread_vars.insert(f.var.get());
      return make_for_like(f, visit(f.body, inner, out));
    }
    Stmt body = visit(f.body, scope, out);
    // The next iteration's head runs after this one's tail.
    if (f.extent > 1 && out.tail.conflicts_with(out.head)) {
      require_uniform(scope);
      body = make_seq({make_barrier(), body});
      out.synchronizes = true;
      out.head = {};
    }
    return make_for_like(f, body);
  }

  Stmt visit_store(const Stmt& s, const Scope& scope, Summary& out) {
    auto* st = s->as<StoreNode>();
    Effects e;
    for (const Expr& i : st->indices) add_shared_reads(i, e);
    add_shared_reads(st->value, e);
    out = Summary::of(e);
    // Its threads exchange their values: all of them must get there.
    if (st->across_threads) require_uniform(scope);
    if (!shared_.count(st->buffer)) return s;
    require_same_for_every_thread(*st, scope);
    out.head.writes.insert(st->buffer);
    out.tail.writes.insert(st->buffer);
    return written_by_one_thread(s, scope);
  }

  // A shared buffer filled by a loop over a thread index (a cooperative fetch) inside a loop
  // bound to the same index holds a different region for each thread when its stores read the
  // outer loop's variable: one buffer per block cannot hold them all.
  void require_same_for_every_thread(const StoreNode& st, const Scope& scope) const {
    auto outside = thread_vars_outside_.find(st.buffer);
    if (outside == thread_vars_outside_.end()) return;
    for (const VarNode* v : outside->second) {
      if (!scope.shadowed.count(v)) continue;
      bool used = uses_var(st.value, v);
      for (const Expr& i : st.indices) used = used || uses_var(i, v);
      if (used)
        throw InvalidState(fmt::format("cannot lower the schedule: shared buffer '{}' holds a region that depends on the thread index '{}'",
                                       st.buffer, v->name));
    }
  }

  // Threads that are not told apart by an enclosing loop would all write the same elements: only
  // the first of them does (a one-iteration loop bound to each such index).
  Stmt written_by_one_thread(Stmt s, const Scope& scope) {
    for (int axis = 2; axis >= 0; --axis) {
      if (dims_[axis] <= 1 || scope.bound_extent[axis] > 0) continue;
      static constexpr IterAnnotation kBindings[3] = {IterAnnotation::ThreadX, IterAnnotation::ThreadY, IterAnnotation::ThreadZ};
      s = make_for(make_var(fmt::format("single_thread_{}{}", "xyz"[axis], single_thread_loops_++)), 1, ForKind::ThreadBinding, s,
                   kBindings[axis]);
    }
    return s;
  }

  Stmt visit_if(const IfThenElseNode& i, const Scope& scope, Summary& out) {
    Scope inner = scope;
    inner.uniform = scope.uniform && !depends_on_thread(i.cond, scope);
    Effects all;
    add_shared_reads(i.cond, all);
    Summary branch;
    Stmt then_case = visit(i.then_case, inner, branch);
    add_all(branch, all);
    Stmt else_case;
    if (i.else_case) {
      else_case = visit(i.else_case, inner, branch);
      add_all(branch, all);
    }
    // A branch may not run: its barriers do not separate what comes before and after.
    out = Summary::of(all);
    return std::make_shared<IfThenElseNode>(i.cond, then_case, else_case, i.role);
  }

  Stmt visit_seq(const std::vector<Stmt>& stmts, const Scope& scope, Summary& out) {
    out = Summary{};
    Effects pending;  // since the last barrier of this sequence (or its start)
    auto passed_barrier = [&]() {
      if (!out.synchronizes) out.head = pending;
      out.synchronizes = true;
    };
    std::vector<Stmt> rewritten;
    for (const Stmt& x : stmts) {
      Summary child;
      Stmt y = visit(x, scope, child);
      if (pending.conflicts_with(child.head)) {
        require_uniform(scope);
        rewritten.push_back(make_barrier());
        passed_barrier();
        pending = {};
      }
      rewritten.push_back(y);
      pending.add(child.head);
      if (child.synchronizes) {
        passed_barrier();
        pending = child.tail;
      }
    }
    out.tail = pending;
    if (!out.synchronizes) out.head = pending;
    return make_seq(std::move(rewritten));
  }

  static void add_all(const Summary& s, Effects& e) {
    e.add(s.head);
    e.add(s.tail);
  }

  void add_shared_reads(const Expr& e, Effects& out) const {
    for (const LoadNode* l : collect_loads(e))
      if (shared_.count(l->tensor)) out.reads.insert(l->tensor);
  }

  static bool depends_on_thread(const Expr& cond, const Scope& scope) {
    return std::any_of(scope.thread_vars.begin(), scope.thread_vars.end(), [&](const VarNode* v) { return uses_var(cond, v); });
  }

  static void require_uniform(const Scope& scope) {
    if (!scope.uniform)
      throw InvalidState("cannot lower the schedule: threads of a block communicate (through shared memory, or reducing across "
                         "threads) where only some of them would get there");
  }

  std::set<std::string> shared_;
  std::map<std::string, std::vector<const VarNode*>> thread_vars_outside_;  // per allocated buffer, the thread loops around it
  ThreadDims dims_ = {1, 1, 1};
  int single_thread_loops_ = 0;
};

}  // namespace

ThreadDims block_thread_dims(const Stmt& s) {
  ThreadDims dims = {1, 1, 1};
  for_each_stmt(s, [&dims](const Stmt& x) {
    auto* f = x->as<ForNode>();
    int axis = f && f->for_kind == ForKind::ThreadBinding ? thread_axis(f->binding) : -1;
    if (axis >= 0) dims[axis] = std::max(dims[axis], f->extent);
  });
  return dims;
}

LoweredKernel insert_gpu_barriers(LoweredKernel kernel) {
  // A kernel without threads (every CPU kernel) has nothing to synchronise: no rebuild.
  if (block_thread_dims(kernel.body) == ThreadDims{1, 1, 1}) return kernel;
  kernel.body = BarrierInserter(kernel).rewrite(kernel.body);
  return kernel;
}

}  // namespace ansor
