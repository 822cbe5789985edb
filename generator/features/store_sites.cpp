// One walk over the loop program, keeping the loops and allocations around the current statement.
#include "features/store_sites.h"

#include <algorithm>
#include <string>
#include <utility>

namespace ansor {

namespace {

class StoreCollector {
 public:
  LoopProgram program;

  void visit(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        int id = static_cast<int>(program.loops.size());
        program.loops.push_back(f);
        program.loop_stores.emplace_back();
        program.has_thread_binding = program.has_thread_binding || f->for_kind == ForKind::ThreadBinding;
        loops_.push_back(id);
        visit(f->body);
        loops_.pop_back();
        return;
      }
      case StmtKind::Store: {
        StoreSite site{s->as<StoreNode>(), loops_, -1, ragged_guards_ > 0};
        for (auto it = allocations_.rbegin(); it != allocations_.rend(); ++it) {
          if (*it->first == site.store->buffer) {
            site.loops_outside_allocation = it->second;
            break;
          }
        }
        int id = static_cast<int>(program.stores.size());
        for (int loop : loops_) program.loop_stores[loop].push_back(id);
        program.stores.push_back(std::move(site));
        return;
      }
      case StmtKind::Allocate: {
        auto* a = s->as<AllocateNode>();
        allocations_.emplace_back(&a->buffer, static_cast<int>(loops_.size()));
        visit(a->body);
        allocations_.pop_back();
        return;
      }
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        // A test that skips a padding's taps is not a ragged tile's guard.
        const bool ragged = i->role == CondRole::Domain &&
                            std::any_of(loops_.begin(), loops_.end(), [&](int l) { return uses_var(i->cond, program.loops[l]->var.get()); });
        ragged_guards_ += ragged;
        visit(i->then_case);
        visit(i->else_case);
        ragged_guards_ -= ragged;
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& x : s->as<SeqNode>()->stmts) visit(x);
        return;
      case StmtKind::Barrier: return;
    }
  }

 private:
  std::vector<int> loops_;
  int ragged_guards_ = 0;  // the conditions on loop variables around the current statement
  std::vector<std::pair<const std::string*, int>> allocations_;  // buffer, loops outside it
};

}  // namespace

LoopProgram collect_stores(const Stmt& body) {
  StoreCollector collector;
  collector.visit(body);
  return std::move(collector.program);
}

}  // namespace ansor
