// The computation of a DAG without its shape: the canonical text with every integer abstracted,
// so that the layers of a network that differ only in sizes (a matmul at 512x512 and at
// 200x1000, a 3x3 convolution over a 28x28 and a 35x35 map) share one key, under which tuning
// finds schedules made for the other shapes.
//
// Integers in the canonical text are extents (tensor shapes, loop and reduction ranges), the
// bounds a padding's condition derives from them, constant indices of unit dimensions, and the
// strides, dilations and pad offsets of the index arithmetic. All of them are abstracted:
// whatever they are, two DAGs of one key have the same operations reading the same tensors, so
// the same stages with the same loops in the same order, and every transform step of one
// applies to the other. A schedule of a stride-2 convolution is a fair first guess for a stride-1
// one (tuning measures it before trusting it). Real constants (0.0 of a padding, the
// coefficients of gelu) and data types are the computation and stay.
#pragma once

#include <string>
#include <string_view>

#include "dag/compute_dag.h"

namespace ansor {

enum class AbstractedNumbers : bool { Integers, All };

// The text with each number of the given kind (not the digits of a name such as T0 or f32)
// replaced by '#'. A real number has a fraction or an exponent.
std::string abstract_numbers(std::string_view text, AbstractedNumbers which);

// The hash of the canonical text with its integers abstracted (32 hex digits).
std::string computation_key(std::string_view canonical_text);
inline std::string computation_key(const ComputeDAG& dag) { return computation_key(dag.canonical_text()); }

}  // namespace ansor
