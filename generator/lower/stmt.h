// Loop programs: what a schedule State lowers to, and what code generators print.
//
// Loops run from 0 to a constant extent. Stores and loads address buffers with
// multi-dimensional indices in the buffer's own coordinates; code generators flatten them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "schedule/stage.h"

namespace ansor {

enum class StmtKind : uint8_t { For, Store, Allocate, IfThenElse, Seq, Barrier };

// How a loop runs, as decided by lowering (a code generator prints it as it is):
enum class ForKind : uint8_t {
  Serial,
  Parallel,       // chunks of iterations on the runtime's threads
  Vectorized,     // one vector statement per store, `extent` lanes wide (some masked off: ForNode)
  VectorizeHint,  // a vectorize annotation with no explicit vector form: the compiler is asked
  Unrolled,       // too long to write out: the compiler is asked to unroll it
  ThreadBinding,  // a GPU index (block, thread, vthread)
  Tensorized,     // with the loops inside it, one call of a tensor intrinsic (lower/tensorize.h)
};

class StmtNode {
 public:
  virtual ~StmtNode() = default;
  const StmtKind kind;

  template <class T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};

using Stmt = std::shared_ptr<const StmtNode>;

struct ForNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  ForNode(Var v, int64_t e, ForKind k, IterAnnotation b, Stmt s, Expr active = nullptr)
      : StmtNode(kKind), var(std::move(v)), extent(e), for_kind(k), binding(b), body(std::move(s)), active_lanes(std::move(active)) {}
  const Var var;
  const int64_t extent;
  const ForKind for_kind;
  const IterAnnotation binding;  // the GPU index with ThreadBinding
  const Stmt body;
  // A masked vector loop (Vectorized only): lanes 0 .. active_lanes - 1 run, the others are
  // masked off, neither loading nor storing. An index expression of the loops outside, between
  // 0 and extent; null where every lane runs. The partial last vector of a ragged tile.
  const Expr active_lanes;

  bool masked() const { return active_lanes != nullptr; }
};

// A reduction across the threads of a GPU block (cross-thread reduction): the store sits in a
// loop bound to a thread index, every thread of that loop contributes its `value`, and the
// element receives the combination of all contributions (not combined with what it held).
// Every thread of the block reaches it, and the loop spans the block along its index.
struct ThreadReduction {
  ReduceOp op;
  Var thread;                 // the variable of the thread-bound loop reduced over
  IterAnnotation binding;     // that loop's thread index
};

struct StoreNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  StoreNode(std::string b, std::vector<Expr> idx, Expr v, std::optional<ThreadReduction> r = std::nullopt)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(idx)), value(std::move(v)), across_threads(std::move(r)) {}
  const std::string buffer;
  const std::vector<Expr> indices;
  const Expr value;
  const std::optional<ThreadReduction> across_threads;
};

// The buffer exists while body runs (its shape and scope are in the kernel's buffer table).
struct AllocateNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  AllocateNode(std::string b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  const std::string buffer;
  const Stmt body;
};

// What a condition of the loop program is for, where passes treat them differently.
enum class CondRole : uint8_t {
  Domain,        // keeps the statements inside the iteration domain (ragged tiles, regions, user conditions)
  SkipIdentity,  // skips updates of a reduction that would combine its identity (taps on a padding):
                 // placed around whole tiles on purpose, it is never unswitched
};

struct IfThenElseNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  IfThenElseNode(Expr c, Stmt t, Stmt e, CondRole r = CondRole::Domain)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)), role(r) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be null
  const CondRole role;
};

struct SeqNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
};

// All threads of a GPU block wait here (shared-memory producers before consumers).
struct BarrierNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;
  BarrierNode() : StmtNode(kKind) {}
};

Stmt make_for(Var var, int64_t extent, ForKind kind, Stmt body, IterAnnotation binding = IterAnnotation::None);
// A loop like f (its variable, extent, kind, binding and mask) around another body.
Stmt make_for_like(const ForNode& f, Stmt body);
Stmt make_store(std::string buffer, std::vector<Expr> indices, Expr value, std::optional<ThreadReduction> across_threads = std::nullopt);
Stmt make_allocate(std::string buffer, Stmt body);
// Drops the condition when it is constant.
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = nullptr, CondRole role = CondRole::Domain);
// Flattens nested sequences; a single statement is returned as is.
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_barrier();

}  // namespace ansor

namespace ansor {

// Replaces variables in every expression of s.
Stmt substitute(const Stmt& s, const VarMap& map);

// Whether s contains a statement that every thread of a GPU block must reach together: a barrier
// or a reduction across threads. Passes that duplicate code under conditions leave such bodies
// alone.
bool has_block_synchronization(const Stmt& s);

// Calls `visit` on s and every statement inside it, in program order (a statement before those
// it contains).
void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& visit);

// One step of a reduction as lowering writes it: A[c] = A[c] op B[...], op a reduction's
// combining operation (add, mul, min, max) and B another buffer. Passes and code generators
// that combine such steps recognise them here.
struct AccumulationStep {
  BinaryOp op;
  const LoadNode* operand;  // B[...]
};
std::optional<AccumulationStep> accumulation_step(const StoreNode& store);

// s rebuilt with `rewrite` applied to each of its child statements (not to s itself): the
// recursion of passes that change only some kinds of statements. Children are rewritten in
// program order, so a rewrite may count what it has seen.
Stmt map_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& rewrite);

}  // namespace ansor
