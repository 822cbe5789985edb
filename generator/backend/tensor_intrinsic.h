// Tensor intrinsics: instructions that compute a small tensor operation at once (a tile of a
// matrix product on AMX, a dot product of int8 quads on VNNI, an MMA of tensor cores). Each
// backend owns a table of the ones its targets offer, so that adding one is adding a row: its
// shapes and operand layouts for the schedule to match, what the target and the compiler must
// offer, how the code generator prints it, and what it computes for the interpreter.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace ansor {

// One operand of an intrinsic: a tile of `shape` elements of `dtype`, row-major with `strides`
// (in elements) as the instruction reads or writes it.
struct IntrinsicOperand {
  std::string name;  // "A", "B", "C"
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

struct TensorIntrinsic {
  std::string name;                     // "amx_tdpbf16ps", "vnni_vpdpbusd"
  std::vector<IntrinsicOperand> inputs;  // in the order the emitter takes them
  IntrinsicOperand output;
  // What the target must offer: CPU features as __builtin_cpu_supports names (avx512bf16,
  // amx-tile) or a minimum GPU architecture ("sm_80"); and the flags the compiler needs.
  std::vector<std::string> required_features;
  std::vector<std::string> compiler_flags;
  // The statement that computes one tile, given the C expressions of the operands' first
  // elements (inputs, then output).
  std::function<std::string(const std::vector<std::string>& operands)> emit;
  // What one call computes, for the interpreter: output += f(inputs), over flat element arrays
  // laid out as the operands say.
  std::function<void(const std::vector<const void*>& inputs, void* output)> interpret;
};

// A backend's table.
using IntrinsicTable = std::span<const TensorIntrinsic>;

}  // namespace ansor
