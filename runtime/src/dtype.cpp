// ansor_dtype_size: element sizes of the dtypes that kernel descriptors use.
#include "ansor/runtime.h"

size_t ansor_dtype_size(ansor_dtype dtype) {
  switch (dtype) {
  case ANSOR_DTYPE_F64:
  case ANSOR_DTYPE_I64:
    return 8;
  case ANSOR_DTYPE_F32:
  case ANSOR_DTYPE_I32:
    return 4;
  case ANSOR_DTYPE_F16:
  case ANSOR_DTYPE_BF16:
  case ANSOR_DTYPE_I16:
    return 2;
  case ANSOR_DTYPE_I8:
  case ANSOR_DTYPE_U8:
  case ANSOR_DTYPE_BOOL:
    return 1;
  }
  // A value outside the enum (a corrupt descriptor) has no size.
  return 0;
}
