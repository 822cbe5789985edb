// Helpers shared by the built-in operator families.
#pragma once

#include <vector>

#include "lang/builtins/builtin.h"

namespace ansor {

// Requires all tensor arguments to share a dtype that supports arithmetic; returns it.
DType common_numeric_dtype(const BuiltinCall& call);
// Requires a floating-point dtype (softmax, normalisations, average pooling).
void expect_float(const BuiltinCall& call, int i);
// Requires every value to be >= minimum.
void expect_at_least(const BuiltinCall& call, const char* what, const std::vector<int64_t>& values, int64_t minimum);

// Pads dimensions first_dim .. first_dim + n of x by before[d] / after[d] elements holding
// `value`; returns x itself when nothing is padded.
TensorRef pad_dims(const BuiltinCall& call, const TensorRef& x, int first_dim, const std::vector<int64_t>& before,
                   const std::vector<int64_t>& after, const Expr& value, const char* suffix = "pad");

// Output extent of a sliding window: (in + pads - dilation * (window - 1) - 1) / stride + 1; an
// error when the window does not fit.
int64_t window_output_extent(const BuiltinCall& call, int64_t in, int64_t pad_total, int64_t window, int64_t stride,
                             int64_t dilation);

}  // namespace ansor
