// Properties of element types, from the table in dtype.def.
#include "ir/dtype.h"

namespace ansor {

namespace {
struct DTypeInfo {
  std::string_view name, c_type, compute_type;
  int bytes;
  bool is_float, is_signed;
};

constexpr DTypeInfo kInfo[] = {
#define DTYPE(Enum, spelling, c_type, compute_type, bytes, is_float, is_signed) \
  {spelling, c_type, compute_type, bytes, is_float, is_signed},
#include "ir/dtype.def"
};

const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_c_type(DType t) { return info(t).c_type; }
std::string_view dtype_compute_type(DType t) { return info(t).compute_type; }
int dtype_bytes(DType t) { return info(t).bytes; }
bool dtype_is_float(DType t) { return info(t).is_float; }
bool dtype_is_int(DType t) { return !info(t).is_float && t != DType::Bool; }
bool dtype_is_signed(DType t) { return info(t).is_signed; }
bool dtype_needs_conversion(DType t) { return t == DType::F16 || t == DType::BF16; }

std::optional<DType> parse_dtype(std::string_view spelling) {
  for (int i = 0; i < static_cast<int>(std::size(kInfo)); ++i)
    if (kInfo[i].name == spelling) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace ansor
