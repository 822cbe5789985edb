// The C++ emitter.
#include "codegen/cpp_codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "codegen/c_emitter.h"

namespace ansor {

namespace {

class CppEmitter final : public CEmitter {
 public:
  explicit CppEmitter(const LoweredKernel& k) : CEmitter(k) {}

  // The function `linkage symbol(params)` running the kernel's loop program.
  std::string run(const std::vector<ParamDecl>& params, const std::string& linkage, const std::string& symbol) {
    name_buffers(params);
    for (auto& [buffer, hints] : kernel_.memory_hints) streams_ = streams_ || hints.stream_stores;
    out_ += fmt::format("{} {} {{\n", linkage, c_prototype(params, symbol, true));
    indent_ = 1;
    line("int ansor_status = 0;");
    emit_workspace_begin();
    // The calling thread, for the calls outside parallel loops. Setups nest (a parallel task on
    // this thread sets up and tears down again), so one around the body holds throughout.
    std::vector<const TensorIntrinsic*> rows;
    collect_thread_setups(kernel_.body, rows);
    if (!rows.empty()) line(fmt::format("if (!({})) return 1;", setup_condition(rows)));
    stmt(kernel_.body);
    emit_teardowns(rows);
    if (streams_) line("ansor_rt::store_fence();");
    line("return ansor_status;");
    out_ += "}\n";
    return out_;
  }

 private:
  std::string float_math_text(MathFn fn, DType, const std::string& args) const override {
    return fmt::format("std::{}({})", math_fn_name(fn), args);
  }

  std::string min_max_text(bool is_min, const std::string& type, const std::string& x, const std::string& y) const override {
    return fmt::format("std::{}<{}>({}, {})", is_min ? "min" : "max", type, x, y);
  }

  std::string special_float_text(const std::string& what, const std::string& type) const override {
    return fmt::format("std::numeric_limits<{}>::{}()", type, what == "nan" ? "quiet_NaN" : "infinity");
  }

  // All root intermediates share one workspace block, carved at 64-byte boundaries.
  void emit_workspace_begin() {
    int64_t offset = 0;
    std::vector<std::pair<const Buffer*, int64_t>> carve;
    for (auto& b : kernel_.buffers) {
      if (b.scope != BufferScope::Workspace) continue;
      carve.push_back({&b, offset});
      offset += (b.num_elements() * dtype_bytes(b.dtype) + 63) / 64 * 64;
    }
    if (carve.empty()) return;
    line("ansor_rt::Workspace ansor_workspace_owner;");
    line(fmt::format("char* ansor_workspace = ansor_workspace_owner.alloc<char>({});", offset));
    line("if (!ansor_workspace) return 1;");
    for (auto& [b, off] : carve)
      line(fmt::format("{}* {} = reinterpret_cast<{}*>(ansor_workspace + {});", dtype_c_type(b->dtype), buffer_names_[b->name],
                       dtype_c_type(b->dtype), off));
  }

  void set_failed() {
    line(parallel_depth_ > 0 ? "__atomic_store_n(&ansor_status, 1, __ATOMIC_RELAXED);" : "ansor_status = 1;");
  }

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: emit_for(*s->as<ForNode>()); break;
      case StmtKind::Store: emit_store(*s->as<StoreNode>()); break;
      case StmtKind::Allocate: emit_allocate(*s->as<AllocateNode>()); break;
      case StmtKind::IfThenElse: emit_if(*s->as<IfThenElseNode>(), [this](const Stmt& x) { stmt(x); }); break;
      case StmtKind::Seq: {
        const std::vector<Stmt>& stmts = s->as<SeqNode>()->stmts;
        for (size_t i = 0; i < stmts.size();) {
          if (const size_t n = kernel_.horizontal_reduction_length(stmts[i].get())) {
            emit_horizontal_reduction(stmts, i, n);
            i += n;
          } else {
            stmt(stmts[i++]);
          }
        }
        break;
      }
      case StmtKind::Barrier: break;  // CPU code runs one thread per block: nothing to wait for
    }
  }

  // The tensor intrinsics with a thread setup whose calls `s` runs on the thread that runs it:
  // none inside parallel loops nested in it, whose tasks set up their own threads.
  void collect_thread_setups(const Stmt& s, std::vector<const TensorIntrinsic*>& rows) const {
    switch (s->kind) {
      case StmtKind::For: collect_loop_setups(*s->as<ForNode>(), rows); return;
      case StmtKind::Allocate: collect_thread_setups(s->as<AllocateNode>()->body, rows); return;
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        collect_thread_setups(i->then_case, rows);
        if (i->else_case) collect_thread_setups(i->else_case, rows);
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& x : s->as<SeqNode>()->stmts) collect_thread_setups(x, rows);
        return;
      case StmtKind::Store:
      case StmtKind::Barrier: return;
    }
  }

  // One row per distinct setup (the AMX rows share theirs).
  void collect_loop_setups(const ForNode& f, std::vector<const TensorIntrinsic*>& rows) const {
    // A parallel loop's tasks set up the threads that run them.
    if (const TensorCall* call = kernel_.find_tensor_call(&f)) {
      const TensorIntrinsic* row = call->intrinsic;
      const bool known = std::any_of(rows.begin(), rows.end(), [&](const TensorIntrinsic* r) { return r->thread_setup == row->thread_setup; });
      if (!row->thread_setup.empty() && !known) rows.push_back(row);
    } else if (f.for_kind != ForKind::Parallel) {
      collect_thread_setups(f.body, rows);
    }
  }

  // The rows' setups, false where one fails (AMX's tile configuration, once per thread and
  // kernel call rather than per call), and their teardowns.
  static std::string setup_condition(const std::vector<const TensorIntrinsic*>& rows) {
    std::string out;
    for (const TensorIntrinsic* row : rows) out += (out.empty() ? "" : " && ") + row->thread_setup;
    return out;
  }
  void emit_teardowns(const std::vector<const TensorIntrinsic*>& rows) {
    for (const TensorIntrinsic* row : rows)
      if (!row->thread_teardown.empty()) line(row->thread_teardown);
  }

  // A task's body reaches the kernel's pointers (parameters, workspace) through the lambda's
  // references. A store of u8 or i8 may alias anything, those references included, so the
  // compiler reloads every pointer after every byte store, and vectorizes none of those loops
  // (an in-kernel pack of int8 weights ran at a byte per several instructions). Where the body
  // stores bytes, it reads copies of the pointers local to the task instead, which no store can
  // reach.
  void localize_pointers_for_byte_stores(const Stmt& body) {
    std::set<std::string> used;
    bool stores_bytes = false;
    for_each_stmt(body, [&](const Stmt& s) {
      auto* st = s->as<StoreNode>();
      if (!st) return;
      const Buffer& target = buffer(st->buffer);
      stores_bytes = stores_bytes || target.dtype == DType::U8 || target.dtype == DType::I8;
      used.insert(st->buffer);
      for (const Expr& e : st->indices)
        for (const LoadNode* l : collect_loads(e)) used.insert(l->tensor);
      for (const LoadNode* l : collect_loads(st->value)) used.insert(l->tensor);
    });
    if (!stores_bytes) return;
    for (const std::string& name : used) {
      const BufferScope scope = buffer(name).scope;
      if (scope != BufferScope::Param && scope != BufferScope::Workspace) continue;
      const std::string local = names_.unique(buffer_names_.at(name) + "_task");
      line(fmt::format("auto* const {} = {};", local, buffer_names_.at(name)));
      buffer_names_[name] = local;
    }
  }

  void emit_for(const ForNode& f) {
    ranges_[f.var.get()] = Interval::range(f.extent);
    std::string v = var_name(f.var.get());
    switch (f.for_kind) {
      case ForKind::Parallel: {
        line(fmt::format("ansor_rt::parallel_for({}, [&](int64_t ansor_begin, int64_t ansor_end) {{", f.extent));
        ++indent_;
        ++parallel_depth_;
        // Each task sets up the thread that runs it for the calls it makes.
        std::vector<const TensorIntrinsic*> rows;
        collect_thread_setups(f.body, rows);
        if (!rows.empty()) {
          line(fmt::format("if (!({})) {{", setup_condition(rows)));
          ++indent_;
          set_failed();
          line("return;");
          --indent_;
          line("}");
        }
        const std::map<std::string, std::string> outer_names = buffer_names_;
        localize_pointers_for_byte_stores(f.body);
        line(fmt::format("for (int64_t {} = ansor_begin; {} < ansor_end; ++{}) {{", v, v, v));
        ++indent_;
        stmt(f.body);
        --indent_;
        line("}");
        buffer_names_ = outer_names;
        emit_teardowns(rows);
        if (streams_) line("ansor_rt::store_fence();");
        --parallel_depth_;
        --indent_;
        line("});");
        return;
      }
      case ForKind::Vectorized:
        emit_prefetches(f.body, f.var.get(), static_cast<int>(f.extent));
        if (f.masked()) {
          emit_masked_vector_loop(f);
        } else {
          emit_vector_stmt(f.body, f.var.get(), static_cast<int>(f.extent));
        }
        return;
      case ForKind::Tensorized:
        if (const TensorCall* call = kernel_.find_tensor_call(&f)) {
          emit_tensor_call(*call);
          return;
        }
        break;  // no intrinsic of the target computes it: the loops as they are
      case ForKind::VectorizeHint: line("ANSOR_VECTORIZE_LOOP"); break;
      case ForKind::Unrolled: line("ANSOR_UNROLL_LOOP"); break;
      case ForKind::ThreadBinding:
        throw std::invalid_argument(fmt::format("the C++ code generator cannot run loop '{}' bound to {}: GPU programs need a GPU code generator",
                                                f.var->name, annotation_name(f.binding)));
      case ForKind::Serial: break;
    }
    line(fmt::format("for ({} {} = 0; {} < {}; ++{}) {{", index_type_, v, v, f.extent, v));
    ++indent_;
    stmt(f.body);
    --indent_;
    line("}");
  }

  // ---- Horizontal reductions ----
  // Lowering found runs of n accumulation steps A[c] = A[c] op B[j], A[c] = A[c] op B[j + 1],
  // ... (the lanes of a vectorised partial reduction combined one by one): a chain of n - 1
  // dependent operations becomes one call of the runtime's balanced-tree helper
  // (ansor_rt::vreduce_*).
  void emit_horizontal_reduction(const std::vector<Stmt>& stmts, size_t i, size_t n) {
    const StoreNode& store = *stmts[i]->as<StoreNode>();
    const AccumulationStep acc = *accumulation_step(store);
    const Buffer& target = buffer(store.buffer);
    const Buffer& source = buffer(acc.operand->tensor);
    const std::string type = compute_type(target.dtype);
    const std::string a = fmt::format("{}[{}]", buffer_names_[target.name], flat_index_text(target, store.indices));
    const char* name = acc.op == BinaryOp::Add ? "add" : acc.op == BinaryOp::Mul ? "mul" : acc.op == BinaryOp::Min ? "min" : "max";
    const std::string reduced = fmt::format("ansor_rt::vreduce_{}<{}, {}>(&{}[{}])", name, type, n, buffer_names_[source.name],
                                            flat_index_text(source, acc.operand->indices));
    std::string value;
    switch (acc.op) {
      case BinaryOp::Min: value = fmt::format("std::min<{}>({}, {})", type, a, reduced); break;
      case BinaryOp::Max: value = fmt::format("std::max<{}>({}, {})", type, a, reduced); break;
      default: value = fmt::format("({} {} {})", a, binary_op_symbol(acc.op), reduced); break;
    }
    line(fmt::format("{} = {};", a, value));
  }

  // ---- Vectorised loops ----
  // A vectorized loop (lowering checked that its body is stores, under conditions that do not
  // depend on the loop, each lane storing its own element) becomes one statement per store on
  // vector values: contiguous accesses are vector loads and stores, values that do not depend
  // on the loop are broadcast, and what has no vector form is assembled lane by lane.

  static bool is_native_vector_type(DType t) { return t == DType::F32 || t == DType::F64; }

  // The lanes of a piece of a bf16 vector store (emit_vector_stmt): one AVX-512 vector of floats,
  // the width of the CPU's tensor intrinsics' accumulators.
  static constexpr int kBf16StorePiece = 16;

  // The prefetches that the memory hints of the loop's stores ask for: for each contiguous load
  // of a prefetched input, the hint's distance ahead of each cache line (of the target's) the
  // vector loads (one line of 64 bytes for 16 floats, two for 32), each address once.

  void emit_prefetches(const Stmt& body, const VarNode* v, int lanes) {
    std::vector<std::string> printed;
    for_each_stmt(body, [&](const Stmt& s) {
      auto* st = s->as<StoreNode>();
      const MemoryHints* hints = st ? kernel_.find_memory_hints(st->buffer) : nullptr;
      if (!hints || hints->prefetch_bytes == 0) return;
      for (const LoadNode* l : collect_loads(st->value)) {
        if (std::find(hints->prefetched.begin(), hints->prefetched.end(), l->tensor) == hints->prefetched.end()) continue;
        const Buffer& b = buffer(l->tensor);
        Expr flat = flat_expr(b, l->indices);
        if (linear_coefficient(flat, v) != 1) continue;
        const int vector_bytes = lanes * dtype_bytes(b.dtype);
        for (int line_offset = 0; line_offset < std::max(vector_bytes, 1); line_offset += kernel_.cache_line_bytes) {
          std::string text = fmt::format("ansor_rt::prefetch(&{}[{}], {});", buffer_names_[b.name], lane_index(flat, v, 0),
                                         hints->prefetch_bytes + line_offset);
          if (std::find(printed.begin(), printed.end(), text) != printed.end()) continue;
          printed.push_back(text);
          line(text);
        }
      }
    });
  }

  // A masked vector loop: its statements on whole vectors, the lanes from the active count on
  // masked off (masked loads and stores, lanes assembled one by one only where active). A count
  // known at run time is computed once, before the statements.
  void emit_masked_vector_loop(const ForNode& f) {
    if (const int64_t* n = as_const_int(f.active_lanes)) {
      active_ = Active{std::to_string(*n), *n};
      emit_vector_stmt(f.body, f.var.get(), static_cast<int>(f.extent));
    } else {
      line("{");
      ++indent_;
      line(fmt::format("const int64_t ansor_active = {};", index_expr(f.active_lanes)));
      active_ = Active{"ansor_active", std::nullopt};
      emit_vector_stmt(f.body, f.var.get(), static_cast<int>(f.extent));
      --indent_;
      line("}");
    }
    active_.reset();
  }

  // Whether lane `lane` is active: nullopt when only the run time knows.
  std::optional<bool> lane_active(int lane) const {
    if (!active_) return true;
    if (active_->lanes) return lane < *active_->lanes;
    return std::nullopt;
  }

  // Lowering allows stream_stores only on a kernel output.
  bool streams_to(const Buffer& b) const {
    const MemoryHints* hints = kernel_.find_memory_hints(b.name);
    return hints && hints->stream_stores;
  }

  void emit_vector_stmt(const Stmt& s, const VarNode* v, int lanes) {
    switch (s->kind) {
      case StmtKind::Seq:
        for (auto& x : s->as<SeqNode>()->stmts) emit_vector_stmt(x, v, lanes);
        return;
      case StmtKind::IfThenElse:
        emit_if(*s->as<IfThenElseNode>(), [&](const Stmt& x) { emit_vector_stmt(x, v, lanes); });
        return;
      default: break;
    }
    auto* st = s->as<StoreNode>();
    const Buffer& b = buffer(st->buffer);
    Expr flat = flat_expr(b, st->indices);
    const std::string& name = buffer_names_[b.name];
    // bf16 values are float vectors, stored rounded as whole vectors of halves. Whole vectors
    // wider than kBf16StorePiece lanes are stored piece by piece, each piece computed from its
    // own lanes: a tile of accumulators that tensor intrinsics wrote 16 floats at a time is then
    // read back in the same pieces, which is what lets the compiler keep it in registers (one
    // load spanning several pieces keeps the whole tile in memory, and every call with it).
    if (b.dtype == DType::BF16 && linear_coefficient(flat, v) == 1) {
      if (active_) {
        line(fmt::format("ansor_rt::vstore_bf16_masked<{}>(&{}[{}], {}, {});", lanes, name, lane_index(flat, v, 0),
                         vector_value(st->value, v, lanes, true).code, active_->text));
        return;
      }
      const int piece = std::min(lanes, kBf16StorePiece);
      const Var lane = make_var(v->name);
      ranges_[lane.get()] = Interval::range(piece);
      for (int first = 0; first < lanes; first += piece) {
        const VarMap at_piece = {{v, add(lane, first)}};
        const Expr piece_value = simplify(substitute(st->value, at_piece), ranges_);
        line(fmt::format("ansor_rt::vstore_bf16<{}>(&{}[{}], {});", piece, name, lane_index(flat, v, first),
                         vector_value(piece_value, lane.get(), piece, true).code));
      }
      return;
    }
    std::string type = compute_type(b.dtype);
    std::string value = vector_value(st->value, v, lanes, true).code;
    if (is_native_vector_type(b.dtype) && linear_coefficient(flat, v) == 1) {
      // Streaming stores write whole vectors: a masked one is stored normally.
      if (active_) {
        line(fmt::format("ansor_rt::vstore_masked<{}, {}>(&{}[{}], {}, {});", type, lanes, name, lane_index(flat, v, 0), value, active_->text));
      } else {
        line(fmt::format("ansor_rt::{}<{}, {}>(&{}[{}], {});", streams_to(b) ? "vstore_stream" : "vstore", type, lanes, name,
                         lane_index(flat, v, 0), value));
      }
      return;
    }
    line("{");
    ++indent_;
    line(fmt::format("const ansor_rt::vec<{}, {}> ansor_lanes = {};", type, lanes, value));
    for (int lane = 0; lane < lanes; ++lane) {
      std::string x = fmt::format("ansor_lanes[{}]", lane);
      if (b.dtype == DType::F16) x = fmt::format("ansor_rt::f32_to_f16({})", x);
      if (b.dtype == DType::BF16) x = fmt::format("ansor_rt::f32_to_bf16({})", x);
      const std::optional<bool> active = lane_active(lane);
      if (active == false) break;
      std::string store = fmt::format("{}[{}] = {};", name, lane_index(flat, v, lane), x);
      line(active == true ? store : fmt::format("if ({} < {}) {}", lane, active_->text, store));
    }
    --indent_;
    line("}");
  }

  std::string lane_index(const Expr& flat, const VarNode* v, int lane) {
    return index_expr(simplify(substitute(flat, {{v, int_imm(lane)}}), ranges_));
  }

  struct VectorCode {
    std::string code;
    bool is_vector;
  };

  std::string broadcast(const VectorCode& c, DType t, int lanes) {
    return c.is_vector ? c.code : fmt::format("ansor_rt::vbroadcast<{}, {}>({})", compute_type(t), lanes, c.code);
  }

  // The value of e in every lane, as a vector when it depends on v (or when `as_vector`).
  VectorCode vector_value(const Expr& e, const VarNode* v, int lanes, bool as_vector = false) {
    if (!uses_var(e, v)) {
      VectorCode scalar{expr(e), false};
      return as_vector ? VectorCode{broadcast(scalar, e->dtype, lanes), true} : scalar;
    }
    std::string type = compute_type(e->dtype);
    if (std::optional<VectorCode> bf16 = bf16_vector_value(e, v, lanes)) return *bf16;
    if (is_native_vector_type(e->dtype)) {
      switch (e->kind) {
        case ExprKind::Load: {
          auto* l = e->as<LoadNode>();
          const Buffer& b = buffer(l->tensor);
          Expr flat = flat_expr(b, l->indices);
          if (is_native_vector_type(b.dtype) && linear_coefficient(flat, v) == 1) {
            const std::string address = fmt::format("&{}[{}]", buffer_names_[b.name], lane_index(flat, v, 0));
            if (active_) return {fmt::format("ansor_rt::vload_masked<{}, {}>({}, {})", type, lanes, address, active_->text), true};
            return {fmt::format("ansor_rt::vload<{}, {}>({})", type, lanes, address), true};
          }
          break;
        }
        case ExprKind::Binary: {
          auto* b = e->as<BinaryNode>();
          if (is_comparison(b->op) || is_logical(b->op) || b->op == BinaryOp::Mod) break;
          VectorCode x = vector_value(b->a, v, lanes), y = vector_value(b->b, v, lanes);
          if (b->op == BinaryOp::Min || b->op == BinaryOp::Max)
            return {fmt::format("ansor_rt::{}<{}, {}>({}, {})", b->op == BinaryOp::Min ? "vmin" : "vmax", type, lanes,
                                broadcast(x, e->dtype, lanes), broadcast(y, e->dtype, lanes)),
                    true};
          // A float division by a value the same in every lane (a softmax's sum, a norm's
          // deviation) multiplies by its reciprocal, one division the compiler hoists out of the
          // loops it does not change in.
          if (b->op == BinaryOp::Div && !y.is_vector && (e->dtype == DType::F32 || e->dtype == DType::F64))
            return {fmt::format("({} * ({} / {}))", x.code, e->dtype == DType::F32 ? "1.0f" : "1.0", y.code), true};
          return {fmt::format("({} {} {})", x.code, binary_op_symbol(b->op), y.code), true};
        }
        case ExprKind::Unary:
          if (e->as<UnaryNode>()->op == UnaryOp::Neg) return {fmt::format("(-{})", vector_value(e->as<UnaryNode>()->operand, v, lanes).code), true};
          break;
        case ExprKind::Call: {
          auto* c = e->as<CallNode>();
          std::vector<std::string> args;
          for (const Expr& a : c->args) args.push_back(broadcast(vector_value(a, v, lanes), e->dtype, lanes));
          // f32 has vector math (vector_math.h); f64 applies the scalar function lane by lane.
          if (e->dtype == DType::F32)
            return {fmt::format("ansor_rt::v{}<{}>({})", math_fn_name(c->fn), lanes, fmt::join(args, ", ")), true};
          if (args.size() != 1) break;
          return {fmt::format("ansor_rt::vmap<{}, {}>({}, []({} ansor_x) {{ return {}; }})", type, lanes, args[0], type,
                              math_call_text(c->fn, e->dtype, {"ansor_x"})),
                  true};
        }
        case ExprKind::Select: {
          auto* s = e->as<SelectNode>();
          // A condition the same in every lane (a pad's row test) picks one whole vector, and
          // only that side is evaluated: its loads may be out of bounds where it is not taken.
          if (!uses_var(s->cond, v))
            return {fmt::format("({} ? {} : {})", expr(s->cond), broadcast(vector_value(s->true_value, v, lanes), e->dtype, lanes),
                                broadcast(vector_value(s->false_value, v, lanes), e->dtype, lanes)),
                    true};
          auto* cmp = s->cond->as<BinaryNode>();
          // A comparison of values of the select's own type gives a mask of the right width.
          if (!cmp || !is_comparison(cmp->op) || cmp->a->dtype != e->dtype) break;
          std::string a = broadcast(vector_value(cmp->a, v, lanes), e->dtype, lanes);
          std::string b = broadcast(vector_value(cmp->b, v, lanes), e->dtype, lanes);
          return {fmt::format("(({} {} {}) ? {} : {})", a, binary_op_symbol(cmp->op), b,
                              broadcast(vector_value(s->true_value, v, lanes), e->dtype, lanes),
                              broadcast(vector_value(s->false_value, v, lanes), e->dtype, lanes)),
                  true};
        }
        case ExprKind::Cast: {
          const Expr& inner = e->as<CastNode>()->value;
          // A bf16 value is a float already: widening it to f32 changes nothing.
          if (inner->dtype == DType::BF16 && e->dtype == DType::F32) return {broadcast(vector_value(inner, v, lanes), inner->dtype, lanes), true};
          if (!is_native_vector_type(inner->dtype)) break;
          return {fmt::format("__builtin_convertvector({}, ansor_rt::vec<{}, {}>)", broadcast(vector_value(inner, v, lanes), inner->dtype, lanes),
                              type, lanes),
                  true};
        }
        default: break;
      }
    }
    // Lane by lane: the scalar expression with the loop variable at each lane's value; masked
    // lanes are 0 and evaluate nothing (their loads may lie outside the buffer).
    std::vector<std::string> parts;
    const std::string zero = fmt::format("{}(0)", type);
    for (int lane = 0; lane < lanes; ++lane) {
      const std::optional<bool> active = lane_active(lane);
      if (active == false) {
        parts.push_back(zero);
        continue;
      }
      std::string value = expr(simplify(substitute(e, {{v, int_imm(lane)}}), ranges_));
      parts.push_back(active == true ? value : fmt::format("({} < {} ? {} : {})", lane, active_->text, value, zero));
    }
    return {fmt::format("ansor_rt::vec<{}, {}>{{{}}}", type, lanes, fmt::join(parts, ", ")), true};
  }

  // A bf16-typed value as a float vector where it has one: a contiguous load of a bf16 buffer
  // (widened exactly), an f32 value converted to bf16 (rounded in every lane), or a choice
  // between such values by a condition the same in every lane (a padding's test of its row and
  // column, the channels in the lanes), only the chosen side evaluated.
  std::optional<VectorCode> bf16_vector_value(const Expr& e, const VarNode* v, int lanes) {
    if (e->dtype != DType::BF16) return std::nullopt;
    if (auto* s = e->as<SelectNode>(); s && !uses_var(s->cond, v))
      return VectorCode{fmt::format("({} ? {} : {})", expr(s->cond), broadcast(vector_value(s->true_value, v, lanes), e->dtype, lanes),
                                    broadcast(vector_value(s->false_value, v, lanes), e->dtype, lanes)),
                        true};
    if (auto* l = e->as<LoadNode>()) {
      const Buffer& b = buffer(l->tensor);
      Expr flat = flat_expr(b, l->indices);
      if (b.dtype != DType::BF16 || linear_coefficient(flat, v) != 1) return std::nullopt;
      const std::string address = fmt::format("&{}[{}]", buffer_names_[b.name], lane_index(flat, v, 0));
      if (active_) return VectorCode{fmt::format("ansor_rt::vload_bf16_masked<{}>({}, {})", lanes, address, active_->text), true};
      return VectorCode{fmt::format("ansor_rt::vload_bf16<{}>({})", lanes, address), true};
    }
    if (auto* c = e->as<CastNode>(); c && c->value->dtype == DType::F32)
      return VectorCode{fmt::format("ansor_rt::vround_bf16<{}>({})", lanes, broadcast(vector_value(c->value, v, lanes), DType::F32, lanes)), true};
    return std::nullopt;
  }

  void emit_allocate(const AllocateNode& a) {
    const Buffer& b = buffer(a.buffer);
    const std::string& name = buffer_names_[b.name];
    std::string type(dtype_c_type(b.dtype));
    line("{");
    ++indent_;
    if (b.scope == BufferScope::Local) {
      line(fmt::format("alignas(64) {} {}[{}];", type, name, b.num_elements()));
      stmt(a.body);
    } else {
      line(fmt::format("ansor_rt::Workspace {}_owner;", name));
      line(fmt::format("{}* {} = {}_owner.alloc<{}>({});", type, name, name, type, b.num_elements()));
      line(fmt::format("if ({}) {{", name));
      ++indent_;
      stmt(a.body);
      --indent_;
      line("} else {");
      ++indent_;
      set_failed();
      --indent_;
      line("}");
    }
    --indent_;
    line("}");
  }

  void emit_store(const StoreNode& s) { line(store_statement(s)); }

  // The active lanes of the masked vector loop being printed: their count as printed, and its
  // value where constant.
  struct Active {
    std::string text;
    std::optional<int64_t> lanes;
  };
  std::optional<Active> active_;
  int parallel_depth_ = 0;
  bool streams_ = false;  // some store streams: parallel chunks and the kernel end with a fence
};

}  // namespace

std::string emit_cpp_kernel(const LoweredKernel& kernel, const std::vector<ParamDecl>& params, const std::string& symbol) {
  if (!kernel.launches.empty())
    throw std::invalid_argument(fmt::format("the C++ code generator cannot print '{}': it was lowered for a GPU target", kernel.name));
  std::string out = CppEmitter(kernel).run(params, "static", "ansor_kernel_impl");
  std::vector<std::string> plain_args, packed_setup;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamDecl& p = params[i];
    plain_args.push_back(p.name);
    if (!p.is_const) continue;
    const std::string type(dtype_c_type(p.dtype));
    const auto [pack_symbol, pack_params, packer, elements] = packed_param(kernel, p, symbol);
    out += "\n";
    if (packer) {
      out += CppEmitter(*packer).run(pack_params, "extern \"C\"", pack_symbol);
      packed_setup.push_back(fmt::format("  {0}* {1}_packed = ansor_workspace_owner.alloc<{0}>({2});\n  if (!{1}_packed) return 1;\n"
                                         "  {3}({1}, {1}_packed);\n",
                                         type, p.name, elements, pack_symbol));
      plain_args.back() = p.name + "_packed";
    } else {
      out += fmt::format("extern \"C\" {} {{\n  std::memcpy({}_packed, {}, sizeof({}) * {});\n  return 0;\n}}\n",
                         c_prototype(pack_params, pack_symbol, true), p.name, p.name, type, elements);
    }
    out += fmt::format("extern \"C\" int64_t {}_{}_packed_elements(void) {{ return {}; }}\n", symbol, p.tensor, elements);
  }
  std::vector<std::string> names;
  for (auto& p : params) names.push_back(p.name);
  out += fmt::format("\nextern \"C\" {} {{\n  return ansor_kernel_impl({});\n}}\n", c_prototype(params, symbol + "_packed", true),
                     fmt::join(names, ", "));
  out += fmt::format("\nextern \"C\" {} {{\n", c_prototype(params, symbol, true));
  if (!packed_setup.empty()) out += "  ansor_rt::Workspace ansor_workspace_owner;\n";
  for (auto& s : packed_setup) out += s;
  out += fmt::format("  return ansor_kernel_impl({});\n}}\n", fmt::join(plain_args, ", "));
  return out;
}

}  // namespace ansor
