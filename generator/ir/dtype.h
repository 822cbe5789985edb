// Element types of tensors and expressions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ansor {

enum class DType : uint8_t {
#define DTYPE(Enum, spelling, c_type, compute_type, bytes, is_float, is_signed) Enum,
#include "ir/dtype.def"
};

// The spelling in kernels.def ("f32").
std::string_view dtype_name(DType t);
// The C type of a tensor element at the kernel interface ("float", "uint16_t" for f16).
std::string_view dtype_c_type(DType t);
// The C++ type values of this dtype are computed in ("float" for f16).
std::string_view dtype_compute_type(DType t);
int dtype_bytes(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);  // integer, not bool
bool dtype_is_signed(DType t);
// Stored with a different type than computed in (f16, bf16).
bool dtype_needs_conversion(DType t);
std::optional<DType> parse_dtype(std::string_view spelling);

// The dtype of index arithmetic: loop variables, extents, indices.
inline constexpr DType kIndexType = DType::I64;

}  // namespace ansor
