// Statement constructors.
#include "lower/stmt.h"

namespace ansor {

Stmt make_for(Var var, int64_t extent, ForKind kind, Stmt body, IterAnnotation binding) {
  return std::make_shared<ForNode>(std::move(var), extent, kind, binding, std::move(body));
}

Stmt make_for_like(const ForNode& f, Stmt body) {
  return std::make_shared<ForNode>(f.var, f.extent, f.for_kind, f.binding, std::move(body), f.active_lanes);
}

Stmt make_store(std::string buffer, std::vector<Expr> indices, Expr value, std::optional<ThreadReduction> across_threads) {
  return std::make_shared<StoreNode>(std::move(buffer), std::move(indices), std::move(value), std::move(across_threads));
}

Stmt make_allocate(std::string buffer, Stmt body) { return std::make_shared<AllocateNode>(std::move(buffer), std::move(body)); }

Stmt make_if(Expr cond, Stmt then_case, Stmt else_case, CondRole role) {
  if (const int64_t* c = as_const_int(cond)) {
    if (*c) return then_case;
    return else_case ? else_case : make_seq({});
  }
  return std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case), role);
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (auto* seq = s->as<SeqNode>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(s);
    }
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<SeqNode>(std::move(flat));
}

Stmt make_barrier() { return std::make_shared<BarrierNode>(); }

}  // namespace ansor

namespace ansor {

Stmt substitute(const Stmt& s, const VarMap& map) {
  switch (s->kind) {
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      return std::make_shared<ForNode>(f->var, f->extent, f->for_kind, f->binding, substitute(f->body, map),
                                       f->active_lanes ? substitute(f->active_lanes, map) : nullptr);
    }
    case StmtKind::Store: {
      auto* st = s->as<StoreNode>();
      std::vector<Expr> idx;
      for (auto& e : st->indices) idx.push_back(substitute(e, map));
      return make_store(st->buffer, std::move(idx), substitute(st->value, map), st->across_threads);
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      return make_allocate(a->buffer, substitute(a->body, map));
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      return make_if(substitute(i->cond, map), substitute(i->then_case, map), i->else_case ? substitute(i->else_case, map) : nullptr, i->role);
    }
    case StmtKind::Seq: {
      std::vector<Stmt> out;
      for (auto& x : s->as<SeqNode>()->stmts) out.push_back(substitute(x, map));
      return make_seq(std::move(out));
    }
    case StmtKind::Barrier: return s;
  }
  return s;
}

void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& visit) {
  visit(s);
  switch (s->kind) {
    case StmtKind::For: for_each_stmt(s->as<ForNode>()->body, visit); break;
    case StmtKind::Allocate: for_each_stmt(s->as<AllocateNode>()->body, visit); break;
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      for_each_stmt(i->then_case, visit);
      if (i->else_case) for_each_stmt(i->else_case, visit);
      break;
    }
    case StmtKind::Seq:
      for (auto& x : s->as<SeqNode>()->stmts) for_each_stmt(x, visit);
      break;
    case StmtKind::Store:
    case StmtKind::Barrier: break;
  }
}

bool has_block_synchronization(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&found](const Stmt& x) {
    auto* st = x->as<StoreNode>();
    found = found || x->kind == StmtKind::Barrier || (st && st->across_threads);
  });
  return found;
}

std::optional<AccumulationStep> accumulation_step(const StoreNode& store) {
  auto* b = store.value->as<BinaryNode>();
  if (!b || !(b->op == BinaryOp::Add || b->op == BinaryOp::Mul || b->op == BinaryOp::Min || b->op == BinaryOp::Max)) return std::nullopt;
  auto* acc = b->a->as<LoadNode>();
  auto* operand = b->b->as<LoadNode>();
  if (!acc || !operand || acc->tensor != store.buffer || operand->tensor == store.buffer || acc->indices.size() != store.indices.size())
    return std::nullopt;
  for (size_t k = 0; k < acc->indices.size(); ++k)
    if (!structural_equal(acc->indices[k], store.indices[k])) return std::nullopt;
  return AccumulationStep{b->op, operand};
}

Stmt map_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& rewrite) {
  switch (s->kind) {
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      return make_for_like(*f, rewrite(f->body));
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      return make_allocate(a->buffer, rewrite(a->body));
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      Stmt then_case = rewrite(i->then_case);
      return make_if(i->cond, then_case, i->else_case ? rewrite(i->else_case) : nullptr, i->role);
    }
    case StmtKind::Seq: {
      std::vector<Stmt> out;
      for (auto& x : s->as<SeqNode>()->stmts) out.push_back(rewrite(x));
      return make_seq(std::move(out));
    }
    case StmtKind::Store:
    case StmtKind::Barrier: return s;
  }
  return s;
}

}  // namespace ansor
