// Operation counts of a store, by walking its expressions once.
#include "features/op_counts.h"

namespace ansor {

namespace {

class OpCounter {
 public:
  OpCounts counts;

  void count(const Expr& e) {
    switch (e->kind) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
      case ExprKind::Var: return;
      case ExprKind::Load:
        for (const Expr& i : e->as<LoadNode>()->indices) count(i);
        return;
      case ExprKind::Unary: {
        auto* u = e->as<UnaryNode>();
        if (u->op == UnaryOp::Not) {
          ++counts.bool_ops;
        } else {
          ++ops_of(u->operand->dtype)[static_cast<int>(ArithKind::AddSub)];
        }
        count(u->operand);
        return;
      }
      case ExprKind::Binary: return count_binary(*e->as<BinaryNode>());
      case ExprKind::Select: {
        auto* s = e->as<SelectNode>();
        ++counts.select_ops;
        count(s->cond);
        count(s->true_value);
        count(s->false_value);
        return;
      }
      case ExprKind::Call:
        ++ops_of(e->dtype)[static_cast<int>(ArithKind::MathFunc)];
        for (const Expr& a : e->as<CallNode>()->args) count(a);
        return;
      case ExprKind::Cast:
        ++ops_of(e->dtype)[static_cast<int>(ArithKind::OtherFunc)];
        count(e->as<CastNode>()->value);
        return;
      case ExprKind::Reduce: count(e->as<ReduceNode>()->source); return;
    }
  }

 private:
  std::array<double, kNumArithKinds>& ops_of(DType t) { return dtype_is_float(t) ? counts.float_ops : counts.int_ops; }

  static const BinaryNode* multiply(const Expr& e, DType t) {
    auto* b = e->as<BinaryNode>();
    return b && b->op == BinaryOp::Mul && dtype_is_float(b->a->dtype) == dtype_is_float(t) ? b : nullptr;
  }

  void count_binary(const BinaryNode& b) {
    if (b.op == BinaryOp::And || b.op == BinaryOp::Or) {
      ++counts.bool_ops;
      count(b.a);
      count(b.b);
      return;
    }
    std::array<double, kNumArithKinds>& ops = ops_of(b.a->dtype);
    if (b.op == BinaryOp::Add || b.op == BinaryOp::Sub) {
      // The multiply that a multiply-add absorbs: the first operand's, else the second's.
      const BinaryNode* m = multiply(b.a, b.a->dtype);
      const Expr* rest = &b.b;
      if (!m) {
        m = multiply(b.b, b.a->dtype);
        rest = &b.a;
      }
      if (m) {
        ++ops[static_cast<int>(ArithKind::Mad)];
        count(m->a);
        count(m->b);
        count(*rest);
        return;
      }
    }
    ++ops[static_cast<int>(kind_of(b.op))];
    count(b.a);
    count(b.b);
  }

  static ArithKind kind_of(BinaryOp op) {
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: return ArithKind::AddSub;
      case BinaryOp::Mul: return ArithKind::Mul;
      case BinaryOp::Div:
      case BinaryOp::Mod: return ArithKind::DivMod;
      default: return ArithKind::Cmp;  // min, max, comparisons
    }
  }
};

double flops(const std::array<double, kNumArithKinds>& ops) {
  double n = 0;
  for (int k = 0; k < kNumArithKinds; ++k) n += ops[k] * (k == static_cast<int>(ArithKind::Mad) ? 2 : 1);
  return n;
}

}  // namespace

double OpCounts::float_flops() const { return flops(float_ops); }
double OpCounts::int_flops() const { return flops(int_ops); }

OpCounts count_ops(const StoreNode& store) {
  OpCounter counter;
  for (const Expr& i : store.indices) counter.count(i);
  counter.count(store.value);
  return counter.counts;
}

}  // namespace ansor
