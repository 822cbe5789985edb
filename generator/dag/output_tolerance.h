// The one rule for how far a computed output may be from its reference: tuning's output check
// (measure/measurer.cpp), the kernel tests (tests/kernels), the property tests of sampled
// schedules and the benchmarks all compare with it, so that a schedule or a vector math
// approximation is never accepted by one and rejected by another.
#ifndef ANSOR_DAG_OUTPUT_TOLERANCE_H
#define ANSOR_DAG_OUTPUT_TOLERANCE_H

#include "dag/compute_dag.h"
#include "ir/expr.h"

namespace ansor {

// The largest error of the f32 vector form of `fn` (runtime/include/ansor/vector_math.h) in
// ulp of the exact result, as docs/vector_math.md states it and
// tests/runtime/vector_math_test.cpp asserts it; 0.5 for the correctly rounded ones and 0 for
// the exact ones.
double vector_math_ulp_bound(MathFn fn);

// The tolerance of a workload's outputs, relative to max(1, the largest |element| of each
// output): an output element `got` matches the reference `want` when
// |got - want| <= tolerance * max(1, max |want|). It adds what a schedule may legitimately
// change: reductions reordered round differently, more so the longer they are (4e-7 per
// element of the longest reduction), and each approximate f32 math call may differ between
// the vector form and the scalar libm of a reference by both forms' errors (the vector bound
// above plus 2 ulp, in ulp of 1: 2^-23). At least 1e-5; at least 2e-2 with f16 or bf16
// anywhere; 0 (exact) when every output is an integer or bool.
double output_tolerance(const ComputeDAG& dag);

// Whether `got` matches `want` under `tolerance` for an output whose largest |element| in the
// reference is `largest` (NaN matches NaN).
bool within_output_tolerance(double got, double want, double tolerance, double largest);

}  // namespace ansor

#endif  // ANSOR_DAG_OUTPUT_TOLERANCE_H
