// Names, lines and scalar expressions of the C-family emitters.
#include "codegen/c_emitter.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace ansor {

namespace {

bool has_load(const Expr& e) { return !collect_loads(e).empty(); }

}  // namespace

std::string compute_type(DType t) { return std::string(dtype_compute_type(t)); }

void CEmitter::name_buffers(const std::vector<ParamDecl>& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    names_.unique(params[i].name);
    buffer_names_[kernel_.buffers[kernel_.params[i]].name] = params[i].name;
  }
  for (auto& b : kernel_.buffers)
    if (b.scope != BufferScope::Param) buffer_names_[b.name] = names_.unique(b.name);
}

void CEmitter::line(const std::string& s) {
  out_.append(indent_ * 2, ' ');
  out_ += s;
  out_ += '\n';
}

void CEmitter::emit_if(const IfThenElseNode& i, const std::function<void(const Stmt&)>& branch) {
  line(fmt::format("if ({}) {{", expr(i.cond)));
  ++indent_;
  branch(i.then_case);
  --indent_;
  if (i.else_case) {
    line("} else {");
    ++indent_;
    branch(i.else_case);
    --indent_;
  }
  line("}");
}

const Buffer& CEmitter::buffer(const std::string& name) const {
  const Buffer* b = kernel_.find_buffer(name);
  if (!b) throw std::logic_error("codegen: unknown buffer " + name);
  return *b;
}

std::string CEmitter::var_name(const VarNode* v) {
  auto it = var_names_.find(v);
  if (it != var_names_.end()) return it->second;
  return var_names_[v] = names_.unique(v->name);
}

void CEmitter::emit_tensor_call(const TensorCall& call) {
  // An operand in a buffer with rotated rows is its base and logical offset: the intrinsic's
  // wrapper finds each element it loads (ansor_rt::rotated_rows).
  auto address = [this](const TensorCall::Operand& o) {
    const Buffer& b = buffer(o.buffer);
    if (const RowRotation& r = b.rotation; r.rotates())
      return fmt::format("ansor_rt::rotated_rows<{}, {}, {}>({}, {})", r.row, r.chunk, r.rows_per_step, buffer_names_.at(o.buffer),
                         index_expr(simplify(flat_index(b, o.indices), ranges_)));
    return fmt::format("&{}[{}]", buffer_names_.at(o.buffer), flat_index_text(b, o.indices));
  };
  const std::string text = call.intrinsic->emit(address(call.lhs), address(call.rhs), address(call.out), call.shape);
  line(call.guard ? fmt::format("if ({}) {}", expr(call.guard), text) : text);
}

std::string CEmitter::store_text(const Buffer& b, const std::vector<Expr>& indices, const std::string& value) {
  std::string stored = value;
  if (b.dtype == DType::F16) stored = fmt::format("ansor_rt::f32_to_f16({})", value);
  if (b.dtype == DType::BF16) stored = fmt::format("ansor_rt::f32_to_bf16({})", value);
  return fmt::format("{}[{}] = {};", buffer_names_.at(b.name), flat_index_text(b, indices), stored);
}

std::string CEmitter::store_statement(const StoreNode& s) {
  const Buffer& b = buffer(s.buffer);
  if (b.dtype != DType::F16 && b.dtype != DType::BF16) return store_text(b, s.indices, expr(s.value));
  // 16-bit elements moved between buffers of their type as bits, and so is a select of one
  // against +0, whose bits are all zero (a padding, a shared copy past its tensor's edge).
  auto same_type_load = [&](const Expr& e) -> const LoadNode* {
    auto* load = e->as<LoadNode>();
    return load && buffer(load->tensor).dtype == b.dtype ? load : nullptr;
  };
  auto load_text = [&](const LoadNode& load) {
    return fmt::format("{}[{}]", buffer_names_.at(load.tensor), flat_index_text(buffer(load.tensor), load.indices));
  };
  const std::string target = fmt::format("{}[{}]", buffer_names_.at(b.name), flat_index_text(b, s.indices));
  if (const LoadNode* load = same_type_load(s.value)) return fmt::format("{} = {};", target, load_text(*load));
  if (auto* sel = s.value->as<SelectNode>()) {
    auto* zero = sel->false_value->as<FloatImmNode>();
    const LoadNode* load = same_type_load(sel->true_value);
    if (load && zero && zero->value == 0.0 && !std::signbit(zero->value))
      return fmt::format("{} = ({} ? {} : uint16_t{{0}});", target, expr(sel->cond), load_text(*load));
  }
  return store_text(b, s.indices, expr(s.value));
}

std::string CEmitter::index_expr(const Expr& e) {
  if (auto* b = e->as<BinaryNode>()) {
    std::string x = index_expr(b->a), y = index_expr(b->b);
    switch (b->op) {
      case BinaryOp::Div:
        if (provably_nonneg(b->a) && provably_nonneg(b->b)) return fmt::format("({} / {})", x, y);
        return fmt::format("ansor_rt::floordiv<{}>({}, {})", index_type_, x, y);
      case BinaryOp::Mod:
        if (provably_nonneg(b->a) && provably_nonneg(b->b)) return fmt::format("({} % {})", x, y);
        return fmt::format("ansor_rt::floormod<{}>({}, {})", index_type_, x, y);
      case BinaryOp::Min: return min_max_text(true, index_type_, x, y);
      case BinaryOp::Max: return min_max_text(false, index_type_, x, y);
      default: return fmt::format("({} {} {})", x, binary_op_symbol(b->op), y);
    }
  }
  return expr(e);
}

std::string CEmitter::int_literal(int64_t v, DType t) const {
  bool wide = v > INT32_MAX || v < INT32_MIN;
  std::string digits = v == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(v) + (wide ? "LL" : "");
  if (t == kIndexType || t == DType::I32) return v < 0 ? "(" + digits + ")" : digits;
  return fmt::format("static_cast<{}>({})", compute_type(t), digits);
}

std::string CEmitter::float_literal(double v, DType t) const {
  bool is_double = t == DType::F64;
  std::string type = is_double ? "double" : "float";
  if (std::isnan(v)) return special_float_text("nan", type);
  if (std::isinf(v)) return fmt::format("({}{})", v < 0 ? "-" : "", special_float_text("inf", type));
  std::string s = is_double ? fmt::format("{}", v) : fmt::format("{}", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (!is_double) s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

std::string CEmitter::math_call_text(MathFn fn, DType t, const std::vector<std::string>& args) const {
  std::string joined = fmt::format("{}", fmt::join(args, ", "));
  switch (fn) {
    case MathFn::Rsqrt:
    case MathFn::Sigmoid:
    case MathFn::Gelu:
    case MathFn::Tf32:
    case MathFn::Relu: return fmt::format("ansor_rt::{}({})", math_fn_name(fn), joined);
    case MathFn::Abs:
      if (!dtype_is_float(t)) return fmt::format("static_cast<{}>({} < 0 ? -{} : {})", compute_type(t), args[0], args[0], args[0]);
      break;
    default: break;
  }
  return float_math_text(fn, t, joined);
}

std::string CEmitter::binary(const Expr& e) {
  const BinaryNode& b = *e->as<BinaryNode>();
  std::string x = expr(b.a), y = expr(b.b);
  DType t = b.a->dtype;
  std::string type = compute_type(t);
  bool int_values = dtype_is_int(t) && (has_load(b.a) || has_load(b.b));
  switch (b.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
      if (int_values) {
        // Signed overflow is undefined in C++; tensor arithmetic wraps, as in numpy.
        if (t == DType::I32 || t == DType::I64) {
          const char* fn = b.op == BinaryOp::Add ? "wrapping_add" : b.op == BinaryOp::Sub ? "wrapping_sub" : "wrapping_mul";
          return fmt::format("ansor_rt::{}<{}>({}, {})", fn, type, x, y);
        }
        return fmt::format("static_cast<{}>({} {} {})", type, x, binary_op_symbol(b.op), y);
      }
      if (dtype_is_int(t)) return index_expr(e);
      return fmt::format("({} {} {})", x, binary_op_symbol(b.op), y);
    case BinaryOp::Div:
      if (dtype_is_float(t)) return fmt::format("({} / {})", x, y);
      if (!int_values) return index_expr(e);
      return fmt::format("ansor_rt::floordiv<{}>({}, {})", type, x, y);
    case BinaryOp::Mod:
      if (dtype_is_float(t)) return fmt::format("ansor_rt::fmod_floor({}, {})", x, y);
      if (!int_values) return index_expr(e);
      return fmt::format("ansor_rt::floormod<{}>({}, {})", type, x, y);
    case BinaryOp::Min: return min_max_text(true, type, x, y);
    case BinaryOp::Max: return min_max_text(false, type, x, y);
    default: return fmt::format("({} {} {})", x, binary_op_symbol(b.op), y);
  }
}

std::string CEmitter::expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm: {
      int64_t v = e->as<IntImmNode>()->value;
      if (e->dtype == DType::Bool) return v ? "true" : "false";
      return int_literal(v, e->dtype);
    }
    case ExprKind::FloatImm: return float_literal(e->as<FloatImmNode>()->value, e->dtype);
    case ExprKind::Var: return var_name(e->as<VarNode>());
    case ExprKind::Load: {
      auto* l = e->as<LoadNode>();
      const Buffer& b = buffer(l->tensor);
      std::string access = fmt::format("{}[{}]", buffer_names_.at(b.name), flat_index_text(b, l->indices));
      if (b.dtype == DType::F16) return fmt::format("ansor_rt::f16_to_f32({})", access);
      if (b.dtype == DType::BF16) return fmt::format("ansor_rt::bf16_to_f32({})", access);
      return access;
    }
    case ExprKind::Unary: {
      auto* u = e->as<UnaryNode>();
      if (u->op == UnaryOp::Not) return fmt::format("(!{})", expr(u->operand));
      if (dtype_is_int(e->dtype) && e->dtype != kIndexType && e->dtype != DType::I32)
        return fmt::format("static_cast<{}>(-{})", compute_type(e->dtype), expr(u->operand));
      return fmt::format("(-{})", expr(u->operand));
    }
    case ExprKind::Binary: return binary(e);
    case ExprKind::Select: {
      auto* s = e->as<SelectNode>();
      return fmt::format("({} ? {} : {})", expr(s->cond), expr(s->true_value), expr(s->false_value));
    }
    case ExprKind::Call: {
      auto* c = e->as<CallNode>();
      std::vector<std::string> args;
      for (auto& a : c->args) args.push_back(expr(a));
      return math_call_text(c->fn, c->dtype, args);
    }
    case ExprKind::Cast: {
      std::string value = expr(e->as<CastNode>()->value);
      // f16 and bf16 values are computed in float, but a conversion to them rounds.
      if (e->dtype == DType::F16) return fmt::format("ansor_rt::f16_to_f32(ansor_rt::f32_to_f16({}))", value);
      if (e->dtype == DType::BF16) return fmt::format("ansor_rt::bf16_to_f32(ansor_rt::f32_to_bf16({}))", value);
      return fmt::format("static_cast<{}>({})", compute_type(e->dtype), value);
    }
    case ExprKind::Reduce: throw std::logic_error("codegen: reduction left in a lowered program");
  }
  return "";
}

PackedParam packed_param(const LoweredKernel& kernel, const ParamDecl& param, const std::string& symbol) {
  PackedParam packed;
  packed.pack_symbol = fmt::format("{}_pack_{}", symbol, param.tensor);
  packed.pack_params = {param, param};
  packed.pack_params[1].name = param.name + "_packed";
  packed.pack_params[1].is_output = true;
  packed.packer = kernel.find_packer(param.tensor);
  const PackedLayout* layout = kernel.find_packed(param.tensor);
  for (int64_t e : layout ? layout->shape : param.shape) packed.elements *= e;
  return packed;
}

}  // namespace ansor
