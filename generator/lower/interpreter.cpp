// Tree-walking interpreter for lowered kernels.
#include "lower/interpreter.h"

#include <ansor/kernel_support.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>


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
  }
  return 0;
}

class Interpreter {
 public:
  Interpreter(const LoweredKernel& k, std::vector<std::vector<double>>& args) : kernel_(k) {
    for (size_t i = 0; i < k.params.size(); ++i) {
      const Buffer& b = k.buffers[k.params[i]];
      if (static_cast<int64_t>(args[i].size()) != b.num_elements())
        throw std::invalid_argument(fmt::format("interpret: argument '{}' has {} elements, expected {}", b.name, args[i].size(),
                                                b.num_elements()));
      buffers_[b.name] = &args[i];
    }
    for (const Buffer& b : k.buffers) {
      buffer_info_[b.name] = &b;
      if (b.scope == BufferScope::Workspace) {
        storage_.emplace_back(std::make_unique<std::vector<double>>(b.num_elements(), std::nan("")));
        buffers_[b.name] = storage_.back().get();
      }
    }
  }

  void run() { exec(kernel_.body); }

 private:
  void exec(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        int64_t& v = vars_[f->var.get()];
        for (int64_t i = 0; i < f->extent; ++i) {
          v = i;
          exec(f->body);
        }
        vars_.erase(f->var.get());
        break;
      }
      case StmtKind::Store: {
        auto* st = s->as<StoreNode>();
        const Buffer& b = *buffer_info_.at(st->buffer);
        double value = eval(st->value);
        (*buffers_.at(st->buffer))[offset(b, st->indices)] = round_to(value, b.dtype);
        break;
      }
      case StmtKind::Allocate: {
        auto* a = s->as<AllocateNode>();
        const Buffer& b = *buffer_info_.at(a->buffer);
        std::vector<double> local(b.num_elements(), std::nan(""));
        std::vector<double>* saved = buffers_.count(a->buffer) ? buffers_[a->buffer] : nullptr;
        buffers_[a->buffer] = &local;
        exec(a->body);
        if (saved) {
          buffers_[a->buffer] = saved;
        } else {
          buffers_.erase(a->buffer);
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

  int64_t offset(const Buffer& b, const std::vector<Expr>& idx) {
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
        auto it = vars_.find(e->as<VarNode>());
        if (it == vars_.end()) throw std::runtime_error("interpret: variable '" + e->as<VarNode>()->name + "' is not bound");
        return static_cast<double>(it->second);
      }
      case ExprKind::Load: {
        auto* l = e->as<LoadNode>();
        auto it = buffers_.find(l->tensor);
        if (it == buffers_.end()) throw std::runtime_error("interpret: buffer '" + l->tensor + "' is not allocated here");
        return (*it->second)[offset(*buffer_info_.at(l->tensor), l->indices)];
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
  std::unordered_map<const VarNode*, int64_t> vars_;
  std::map<std::string, std::vector<double>*> buffers_;
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
