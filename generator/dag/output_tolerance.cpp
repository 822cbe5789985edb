// The output tolerance rule (output_tolerance.h).
#include "dag/output_tolerance.h"

#include <algorithm>
#include <cmath>

#include "dag/access_analysis.h"

namespace ansor {

double vector_math_ulp_bound(MathFn fn) {
  switch (fn) {
    case MathFn::Abs:
    case MathFn::Floor:
    case MathFn::Ceil:
    case MathFn::Tf32:
    case MathFn::Relu: return 0;
    case MathFn::Sqrt: return 0.5;
    case MathFn::Rsqrt: return 1.5;  // two correctly rounded operations, as the scalar rsqrt
    case MathFn::Exp:
    case MathFn::Log: return 1.5;
    case MathFn::Tanh:
    case MathFn::Erf: return 2.5;
    case MathFn::Sigmoid: return 3;
    case MathFn::Gelu: return 7;  // 6 with FMA, 7 without (targets below AVX2)
    case MathFn::Pow: return 1;
  }
  return 6;
}

namespace {

// The scalar path's own error (libm in float, ansor_rt::gelu), in ulp.
constexpr double kScalarUlp = 2;

// Functions whose vector and scalar forms give bitwise the same results.
bool same_in_both_forms(MathFn fn) {
  return fn == MathFn::Abs || fn == MathFn::Floor || fn == MathFn::Ceil || fn == MathFn::Relu || fn == MathFn::Sqrt ||
         fn == MathFn::Rsqrt || fn == MathFn::Tf32;
}

}  // namespace

double output_tolerance(const ComputeDAG& dag) {
  int64_t longest = 1;
  double math = 0;
  bool low_precision = false, all_integer = true;
  for (const OpPtr& op : dag.ops()) {
    longest = std::max(longest, reduction_size(*op));
    low_precision = low_precision || op->dtype == DType::F16 || op->dtype == DType::BF16;
    if (!op->body) continue;
    // Counting every call bounds the calls on any one path to an output.
    visit_pre_order(op->body, [&](const Expr& e) {
      if (auto* c = e->as<CallNode>(); c && c->dtype == DType::F32 && !same_in_both_forms(c->fn))
        math += (vector_math_ulp_bound(c->fn) + kScalarUlp) * 0x1p-23;
      return true;
    });
  }
  for (int o : dag.outputs()) all_integer = all_integer && !dtype_is_float(dag.op(o).dtype);
  if (all_integer) return 0;
  double tol = std::max(1e-5, 4e-7 * static_cast<double>(longest) + math);
  return low_precision ? std::max(tol, 2e-2) : tol;
}

bool within_output_tolerance(double got, double want, double tolerance, double largest) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  return std::fabs(got - want) <= tolerance * std::max(1.0, largest);
}

}  // namespace ansor
