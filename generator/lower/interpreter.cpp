// Tree-walking interpreter for lowered kernels.
#include "lower/interpreter.h"

#include <ansor/kernel_support.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "lower/gpu_sync.h"

namespace ansor {

namespace {

int64_t wrap(int64_t v, DType t) {
  switch (t) {
    case DType::I8: return static_cast<int8_t>(v);
    case DType::I16: return static_cast<int16_t>(v);
    case DType::I32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DType::U8: return static_cast<uint8_t>(v);
    case DType::Bool: return v != 0;
    default: return v;
  }
}

// The value a buffer of dtype t holds after storing v.
double round_to(double v, DType t) {
  switch (t) {
    case DType::F32: return static_cast<float>(v);
    case DType::F16: return ansor_rt::f16_to_f32(ansor_rt::f32_to_f16(static_cast<float>(v)));
    case DType::BF16: return ansor_rt::bf16_to_f32(ansor_rt::f32_to_bf16(static_cast<float>(v)));
    case DType::F64: return v;
    default: return static_cast<double>(wrap(static_cast<int64_t>(v), t));
  }
}

double apply_math(MathFn fn, const std::vector<double>& a) {
  double x = a[0];
  switch (fn) {
    case MathFn::Exp: return std::exp(x);
    case MathFn::Log: return std::log(x);
    case MathFn::Sqrt: return std::sqrt(x);
    case MathFn::Rsqrt: return 1.0 / std::sqrt(x);
    case MathFn::Tanh: return std::tanh(x);
    case MathFn::Sigmoid: return ansor_rt::sigmoid(x);
    case MathFn::Erf: return std::erf(x);
    case MathFn::Abs: return std::fabs(x);
    case MathFn::Floor: return std::floor(x);
    case MathFn::Ceil: return std::ceil(x);
    case MathFn::Pow: return std::pow(x, a[1]);
    case MathFn::Relu: return x < 0 ? 0 : x;
    case MathFn::Gelu: return ansor_rt::gelu(x);
    case MathFn::Tf32: return ansor_rt::tf32(x);
  }
  return 0;
}

// What one thread sees: its variables and the buffers it can reach.
struct ThreadContext {
  std::unordered_map<const VarNode*, int64_t> vars;
  std::map<std::string, std::vector<double>*> buffers;
};

// Who accessed an element of a shared or global buffer since the block's last barrier.
struct ElementAccess {
  int writer = -1;
  int reader = -1;
  int other_reader = -1;  // a second reader besides `reader`, if any
};

struct ElementKey {
  const Buffer* buffer;
  int64_t element;
  bool operator==(const ElementKey& o) const { return buffer == o.buffer && element == o.element; }
};

struct ElementKeyHash {
  size_t operator()(const ElementKey& k) const {
    return std::hash<const void*>()(k.buffer) ^ (static_cast<size_t>(k.element) * 0x9e3779b97f4a7c15ULL);
  }
};

// The threads of the GPU block being run, in lock step.
struct GpuBlock {
  int64_t index = 0;
  ThreadDims dims = {1, 1, 1};
  std::vector<ThreadContext> threads;
  std::unordered_map<ElementKey, ElementAccess, ElementKeyHash> accesses;  // since the last barrier

  int64_t coordinate(int thread, int axis) const {
    int64_t t = thread;
    for (int a = 0; a < axis; ++a) t /= dims[a];
    return t % dims[axis];
  }
};

class Interpreter {
 public:
  Interpreter(const LoweredKernel& k, std::vector<std::vector<double>>& args) : kernel_(k) {
    for (size_t i = 0; i < k.params.size(); ++i) {
      const Buffer& b = k.buffers[k.params[i]];
      if (static_cast<int64_t>(args[i].size()) != b.num_elements())
        throw std::invalid_argument(fmt::format("interpret: argument '{}' has {} elements, expected {}", b.name, args[i].size(),
                                                b.num_elements()));
      host_.buffers[b.name] = &args[i];
    }
    for (const Buffer& b : k.buffers) {
      buffer_info_[b.name] = &b;
      if (b.scope == BufferScope::Workspace) {
        storage_.emplace_back(std::make_unique<std::vector<double>>(b.num_elements(), std::nan("")));
        host_.buffers[b.name] = storage_.back().get();
      }
    }
  }

  void run() { exec(kernel_.body); }

 private:
  // Outside GPU blocks: one thread.
  void exec(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        if (f->for_kind == ForKind::ThreadBinding && f->binding != IterAnnotation::VThread) {
          run_grid(*f, s);
          break;
        }
        if (const TensorCall* call = kernel_.find_tensor_call(f)) {
          exec_tensor_call(*call);
          break;
        }
        // A masked vector loop runs its active lanes only.
        const int64_t extent = f->masked() ? std::clamp<int64_t>(static_cast<int64_t>(eval(f->active_lanes)), 0, f->extent) : f->extent;
        int64_t& v = ctx_->vars[f->var.get()];
        for (int64_t i = 0; i < extent; ++i) {
          v = i;
          exec(f->body);
        }
        ctx_->vars.erase(f->var.get());
        break;
      }
      case StmtKind::Store: {
        auto* st = s->as<StoreNode>();
        const Buffer& b = *buffer_info_.at(st->buffer);
        if (st->across_threads) throw std::runtime_error("interpret: a reduction across threads outside a GPU block");
        double value = eval(st->value);
        (*ctx_->buffers.at(st->buffer))[offset(b, st->indices)] = round_to(value, b.dtype);
        break;
      }
      case StmtKind::Allocate: {
        auto* a = s->as<AllocateNode>();
        const Buffer& b = *buffer_info_.at(a->buffer);
        std::vector<double> local(b.num_elements(), std::nan(""));
        std::vector<double>* saved = ctx_->buffers.count(a->buffer) ? ctx_->buffers[a->buffer] : nullptr;
        ctx_->buffers[a->buffer] = &local;
        exec(a->body);
        if (saved) {
          ctx_->buffers[a->buffer] = saved;
        } else {
          ctx_->buffers.erase(a->buffer);
        }
        break;
      }
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        if (eval(i->cond) != 0) {
          exec(i->then_case);
        } else if (i->else_case) {
          exec(i->else_case);
        }
        break;
      }
      case StmtKind::Seq:
        for (auto& x : s->as<SeqNode>()->stmts) exec(x);
        break;
      case StmtKind::Barrier: break;
    }
  }

  // A tensorized loop runs its intrinsic's own meaning on the elements its operands span, in
  // their element types, so that the row's layout and arithmetic are what the kernel tests check.
  void exec_tensor_call(const TensorCall& call) {
    if (call.guard && eval(call.guard) == 0) return;
    const TensorIntrinsic& row = *call.intrinsic;
    struct Elements {
      const TensorCall::Operand* operand;
      const std::vector<int64_t>* strides;
      std::vector<unsigned char> bytes;
      int64_t first = 0;
    };
    Elements parts[] = {{&call.lhs, &call.shape.lhs_strides, {}, 0},
                        {&call.rhs, &call.shape.rhs_strides, {}, 0},
                        {&call.out, &call.shape.out_strides, {}, 0}};
    for (Elements& p : parts) {
      const Buffer& b = *buffer_info_.at(p.operand->buffer);
      const std::vector<double>& data = *ctx_->buffers.at(b.name);
      p.first = logical_offset(b, p.operand->indices);
      const int64_t n = operand_span(call.shape, *p.strides);
      p.bytes.resize(static_cast<size_t>(n * dtype_bytes(b.dtype)));
      for (int64_t i = 0; i < n; ++i) store_typed(b.dtype, data.at(static_cast<size_t>(stored_at(b, p.first + i))), p.bytes.data(), i);
    }
    row.interpret(parts[0].bytes.data(), parts[1].bytes.data(), parts[2].bytes.data(), call.shape);
    // Only the elements the nest stores: a span of rows apart holds others' elements too.
    const Buffer& out = *buffer_info_.at(call.out.buffer);
    std::vector<double>& data = *ctx_->buffers.at(out.name);
    for_each_nest_point(call.shape, [&](int64_t, int64_t, int64_t i) {
      data.at(static_cast<size_t>(stored_at(out, parts[2].first + i))) = load_typed(out.dtype, parts[2].bytes.data(), i);
    });
  }

  // An element of the given type at position i of raw storage, to and from the interpreter's doubles.
  static void store_typed(DType t, double v, unsigned char* base, int64_t i) {
    if (std::isnan(v) && t != DType::F32 && t != DType::BF16) v = 0;  // an element not yet written, which the call does not read
    switch (t) {
      case DType::F32: reinterpret_cast<float*>(base)[i] = static_cast<float>(v); return;
      case DType::BF16: reinterpret_cast<uint16_t*>(base)[i] = ansor_rt::f32_to_bf16(static_cast<float>(v)); return;
      case DType::I32: reinterpret_cast<int32_t*>(base)[i] = static_cast<int32_t>(v); return;
      case DType::I8: reinterpret_cast<int8_t*>(base)[i] = static_cast<int8_t>(v); return;
      case DType::U8: reinterpret_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); return;
      default: throw std::runtime_error(fmt::format("interpret: no tensor intrinsic operand of type {}", dtype_name(t)));
    }
  }
  static double load_typed(DType t, const unsigned char* base, int64_t i) {
    switch (t) {
      case DType::F32: return reinterpret_cast<const float*>(base)[i];
      case DType::I32: return reinterpret_cast<const int32_t*>(base)[i];
      default: throw std::runtime_error(fmt::format("interpret: no tensor intrinsic result of type {}", dtype_name(t)));
    }
  }

  // A loop bound to a block index runs its blocks one after another; a loop bound to a thread
  // index outside any is a block of its own.
  void run_grid(const ForNode& f, const Stmt& s) {
    if (!is_block_index(f.binding)) {
      run_block(s, 0);
      return;
    }
    for (int64_t i = 0; i < f.extent; ++i) {
      host_.vars[f.var.get()] = i;
      run_block(f.body, i);
    }
    host_.vars.erase(f.var.get());
  }

  void run_block(const Stmt& body, int64_t index) {
    GpuBlock block;
    block.index = index;
    block.dims = dims_of(body);
    block.threads.assign(static_cast<size_t>(block.dims[0] * block.dims[1] * block.dims[2]), host_);
    std::vector<int> all(block.threads.size());
    for (size_t t = 0; t < all.size(); ++t) all[t] = static_cast<int>(t);
    block_ = &block;
    try {
      exec_simt(body, all);
    } catch (...) {
      leave_block();
      throw;
    }
    leave_block();
  }

  void leave_block() {
    block_ = nullptr;
    thread_ = -1;
    ctx_ = &host_;
  }

  const ThreadDims& dims_of(const Stmt& body) {
    auto it = block_dims_.find(body.get());
    if (it == block_dims_.end()) it = block_dims_.emplace(body.get(), block_thread_dims(body)).first;
    return it->second;
  }

  void enter_thread(int t) {
    thread_ = t;
    ctx_ = &block_->threads[static_cast<size_t>(t)];
  }

  // Inside a block: the active threads run s in lock step.
  void exec_simt(const Stmt& s, const std::vector<int>& active) {
    if (active.empty()) return;
    switch (s->kind) {
      case StmtKind::For: exec_simt_for(*s->as<ForNode>(), active); break;
      case StmtKind::Store: {
        auto* st = s->as<StoreNode>();
        const Buffer& b = *buffer_info_.at(st->buffer);
        if (st->across_threads) {
          exec_thread_reduction(*st, b, active);
          break;
        }
        for (int t : active) {
          enter_thread(t);
          double value = eval(st->value);
          int64_t element = offset(b, st->indices);
          note_access(b, element, true);
          (*ctx_->buffers.at(st->buffer))[element] = round_to(value, b.dtype);
        }
        break;
      }
      case StmtKind::Allocate: exec_simt_allocate(*s->as<AllocateNode>(), active); break;
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        std::vector<int> taken, not_taken;
        for (int t : active) {
          enter_thread(t);
          (eval(i->cond) != 0 ? taken : not_taken).push_back(t);
        }
        exec_simt(i->then_case, taken);
        if (i->else_case) exec_simt(i->else_case, not_taken);
        break;
      }
      case StmtKind::Seq:
        for (auto& x : s->as<SeqNode>()->stmts) exec_simt(x, active);
        break;
      case StmtKind::Barrier:
        if (active.size() != block_->threads.size())
          throw std::runtime_error(fmt::format("interpret: only {} of the {} threads of block {} reach barrier {} (in program order)",
                                               active.size(), block_->threads.size(), block_->index, barrier_ordinal(s)));
        block_->accesses.clear();
        break;
    }
  }

  // A reduction across the threads of a loop bound to one thread index: every thread of the block
  // takes part; the threads that differ only in that index combine their values in index order,
  // and the first of them stores the result, or each of them into a local buffer of its own.
  void exec_thread_reduction(const StoreNode& st, const Buffer& b, const std::vector<int>& active) {
    if (active.size() != block_->threads.size())
      throw std::runtime_error(fmt::format("interpret: only {} of the {} threads of block {} reach the reduction across threads into '{}'",
                                           active.size(), block_->threads.size(), block_->index, b.name));
    const int axis = thread_axis(st.across_threads->binding);
    struct Group {
      std::vector<int> threads;
      double value = 0;
    };
    std::map<int64_t, Group> groups;  // per group (the other indices): its threads and the value so far
    for (int t : active) {
      enter_thread(t);
      double value = eval(st.value);
      int64_t group = 0;
      for (int a = 2; a >= 0; --a)
        if (a != axis) group = group * block_->dims[a] + block_->coordinate(t, a);
      Group& g = groups[group];
      g.value = g.threads.empty() ? value : combine(st.across_threads->op, g.value, value);
      g.threads.push_back(t);
    }
    for (const auto& [group, result] : groups) {
      const size_t storing = b.scope == BufferScope::Local ? result.threads.size() : 1;
      for (size_t i = 0; i < storing; ++i) {
        enter_thread(result.threads[i]);
        int64_t element = offset(b, st.indices);
        note_access(b, element, true);
        (*ctx_->buffers.at(st.buffer))[element] = round_to(result.value, b.dtype);
      }
    }
  }

  static double combine(ReduceOp op, double a, double b) {
    switch (op) {
      case ReduceOp::Sum: return a + b;
      case ReduceOp::Prod: return a * b;
      case ReduceOp::Min: return std::min(a, b);
      case ReduceOp::Max: return std::max(a, b);
    }
    return a;
  }

  // A thread-bound loop does not iterate: each thread below its extent takes its own index
  // (the same hardware index as an enclosing loop of the same binding). Other loops iterate
  // with every active thread.
  void exec_simt_for(const ForNode& f, const std::vector<int>& active) {
    int axis = f.for_kind == ForKind::ThreadBinding ? thread_axis(f.binding) : -1;
    if (axis >= 0) {
      std::vector<int> inside;
      for (int t : active) {
        int64_t index = block_->coordinate(t, axis);
        if (index >= f.extent) continue;
        block_->threads[static_cast<size_t>(t)].vars[f.var.get()] = index;
        inside.push_back(t);
      }
      exec_simt(f.body, inside);
      for (int t : inside) block_->threads[static_cast<size_t>(t)].vars.erase(f.var.get());
      return;
    }
    for (int64_t i = 0; i < f.extent; ++i) {
      for (int t : active) block_->threads[static_cast<size_t>(t)].vars[f.var.get()] = i;
      exec_simt(f.body, f.masked() ? lanes_below(active, f.active_lanes, i) : active);
    }
    for (int t : active) block_->threads[static_cast<size_t>(t)].vars.erase(f.var.get());
  }

  // The threads of `active` for which lane i of a masked vector loop is active.
  std::vector<int> lanes_below(const std::vector<int>& active, const Expr& count, int64_t i) {
    std::vector<int> inside;
    for (int t : active) {
      enter_thread(t);
      if (static_cast<double>(i) < eval(count)) inside.push_back(t);
    }
    return inside;
  }

  // Local buffers are per thread; shared ones (and any other) one per block.
  void exec_simt_allocate(const AllocateNode& a, const std::vector<int>& active) {
    const Buffer& b = *buffer_info_.at(a.buffer);
    size_t copies = b.scope == BufferScope::Local ? active.size() : 1;
    std::vector<std::vector<double>> storage(copies, std::vector<double>(static_cast<size_t>(b.num_elements()), std::nan("")));
    std::vector<std::vector<double>*> saved;
    for (size_t k = 0; k < active.size(); ++k) {
      auto& buffers = block_->threads[static_cast<size_t>(active[k])].buffers;
      auto it = buffers.find(a.buffer);
      saved.push_back(it == buffers.end() ? nullptr : it->second);
      buffers[a.buffer] = &storage[copies == 1 ? 0 : k];
    }
    exec_simt(a.body, active);
    for (size_t k = 0; k < active.size(); ++k) {
      auto& buffers = block_->threads[static_cast<size_t>(active[k])].buffers;
      if (saved[k]) {
        buffers[a.buffer] = saved[k];
      } else {
        buffers.erase(a.buffer);
      }
    }
  }

  // Two threads touching an element between two barriers, at least one of them writing, race.
  void note_access(const Buffer& b, int64_t element, bool write) {
    if (!block_ || b.scope == BufferScope::Local) return;
    ElementAccess& a = block_->accesses[ElementKey{&b, element}];
    if (a.writer >= 0 && a.writer != thread_) report_race(b, element, a.writer);
    if (write) {
      int other = a.reader != thread_ ? a.reader : a.other_reader;
      if (other >= 0) report_race(b, element, other);
      a.writer = thread_;
    } else if (a.reader < 0) {
      a.reader = thread_;
    } else if (a.reader != thread_ && a.other_reader < 0) {
      a.other_reader = thread_;
    }
  }

  [[noreturn]] void report_race(const Buffer& b, int64_t element, int other) const {
    throw std::runtime_error(fmt::format("interpret: threads {} and {} of block {} access '{}' element {} without a barrier between them",
                                         thread_, other, block_->index, b.name, element));
  }

  // The position of a barrier among the kernel's barriers, for messages.
  int barrier_ordinal(const Stmt& barrier) const {
    int count = 0, found = -1;
    for_each_stmt(kernel_.body, [&](const Stmt& s) {
      if (s->kind != StmtKind::Barrier) return;
      if (s == barrier && found < 0) found = count;
      ++count;
    });
    return found;
  }

  // Where an element is stored: its logical offset, rotated where the buffer's rows are.
  int64_t offset(const Buffer& b, const std::vector<Expr>& idx) { return stored_at(b, logical_offset(b, idx)); }
  static int64_t stored_at(const Buffer& b, int64_t logical) { return b.rotation.rotated_offset(logical); }

  int64_t logical_offset(const Buffer& b, const std::vector<Expr>& idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = static_cast<int64_t>(eval(idx[d]));
      if (i < 0 || i >= b.shape[d])
        throw std::runtime_error(fmt::format("interpret: index {} of dimension {} of '{}' is outside [0, {})", i, d, b.name, b.shape[d]));
      flat += i * b.strides[d];
    }
    return flat;
  }

  double eval(const Expr& e) {
    switch (e->kind) {
      case ExprKind::IntImm: return static_cast<double>(e->as<IntImmNode>()->value);
      case ExprKind::FloatImm: return e->as<FloatImmNode>()->value;
      case ExprKind::Var: {
        auto it = ctx_->vars.find(e->as<VarNode>());
        if (it == ctx_->vars.end()) throw std::runtime_error("interpret: variable '" + e->as<VarNode>()->name + "' is not bound");
        return static_cast<double>(it->second);
      }
      case ExprKind::Load: {
        auto* l = e->as<LoadNode>();
        auto it = ctx_->buffers.find(l->tensor);
        if (it == ctx_->buffers.end()) throw std::runtime_error("interpret: buffer '" + l->tensor + "' is not allocated here");
        const Buffer& b = *buffer_info_.at(l->tensor);
        int64_t element = offset(b, l->indices);
        if (block_) note_access(b, element, false);
        return (*it->second)[element];
      }
      case ExprKind::Unary: {
        auto* u = e->as<UnaryNode>();
        double a = eval(u->operand);
        if (u->op == UnaryOp::Not) return a == 0;
        return dtype_is_float(e->dtype) ? -a : static_cast<double>(wrap(-static_cast<int64_t>(a), e->dtype));
      }
      case ExprKind::Binary: return eval_binary(*e->as<BinaryNode>());
      case ExprKind::Select: {
        auto* s = e->as<SelectNode>();
        return eval(s->cond) != 0 ? eval(s->true_value) : eval(s->false_value);
      }
      case ExprKind::Call: {
        auto* c = e->as<CallNode>();
        std::vector<double> args;
        for (auto& a : c->args) args.push_back(eval(a));
        if (!dtype_is_float(e->dtype)) {
          int64_t x = static_cast<int64_t>(args[0]);
          if (c->fn == MathFn::Abs) return static_cast<double>(wrap(x < 0 ? -x : x, e->dtype));
          if (c->fn == MathFn::Relu) return static_cast<double>(x < 0 ? 0 : x);
        }
        return apply_math(c->fn, args);
      }
      case ExprKind::Cast: {
        double v = eval(e->as<CastNode>()->value);
        if (dtype_is_float(e->dtype)) return round_to(v, e->dtype);
        if (e->dtype == DType::Bool) return v != 0;
        return static_cast<double>(wrap(static_cast<int64_t>(std::trunc(v)), e->dtype));
      }
      case ExprKind::Reduce: throw std::runtime_error("interpret: reduction left in a lowered program");
    }
    return 0;
  }

  double eval_binary(const BinaryNode& b) {
    double x = eval(b.a);
    if (b.op == BinaryOp::And) return x != 0 && eval(b.b) != 0;
    if (b.op == BinaryOp::Or) return x != 0 || eval(b.b) != 0;
    double y = eval(b.b);
    switch (b.op) {
      case BinaryOp::EQ: return x == y;
      case BinaryOp::NE: return x != y;
      case BinaryOp::LT: return x < y;
      case BinaryOp::LE: return x <= y;
      case BinaryOp::GT: return x > y;
      case BinaryOp::GE: return x >= y;
      case BinaryOp::Min: return std::min(x, y);
      case BinaryOp::Max: return std::max(x, y);
      default: break;
    }
    DType t = b.a->dtype;
    if (dtype_is_float(t)) {
      switch (b.op) {
        case BinaryOp::Add: return x + y;
        case BinaryOp::Sub: return x - y;
        case BinaryOp::Mul: return x * y;
        case BinaryOp::Div: return x / y;
        case BinaryOp::Mod: return x - std::floor(x / y) * y;
        default: return 0;
      }
    }
    int64_t a = static_cast<int64_t>(x), c = static_cast<int64_t>(y);
    switch (b.op) {
      case BinaryOp::Add: return static_cast<double>(wrap(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(c)), t));
      case BinaryOp::Sub: return static_cast<double>(wrap(static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(c)), t));
      case BinaryOp::Mul: return static_cast<double>(wrap(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(c)), t));
      case BinaryOp::Div:
        if (c == 0) throw std::runtime_error("interpret: integer division by zero");
        return static_cast<double>(wrap(ansor_rt::floordiv<int64_t>(a, c), t));
      case BinaryOp::Mod:
        if (c == 0) throw std::runtime_error("interpret: integer division by zero");
        return static_cast<double>(wrap(ansor_rt::floormod<int64_t>(a, c), t));
      default: return 0;
    }
  }

  const LoweredKernel& kernel_;
  ThreadContext host_;            // outside GPU blocks
  ThreadContext* ctx_ = &host_;   // whose variables and buffers expressions see
  GpuBlock* block_ = nullptr;        // the GPU block being run
  int thread_ = -1;               // the thread of block_ that ctx_ is
  std::unordered_map<const StmtNode*, ThreadDims> block_dims_;
  std::map<std::string, const Buffer*> buffer_info_;
  std::vector<std::unique_ptr<std::vector<double>>> storage_;
};

}  // namespace

void interpret(const LoweredKernel& kernel, std::vector<std::vector<double>>& args) { Interpreter(kernel, args).run(); }

std::vector<double> pack_input(const LoweredKernel& packer, const std::vector<double>& plain) {
  std::vector<std::vector<double>> args = {plain, std::vector<double>(packer.buffers[packer.params[1]].num_elements())};
  interpret(packer, args);
  return args[1];
}

}  // namespace ansor
