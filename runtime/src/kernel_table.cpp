// ansor_find_kernel: lookup by name in the kernel table of a generated library. Tables hold a
// handful of kernels, so a linear search is all that is needed.
#include "ansor/runtime.h"

#include <cstring>

const ansor_kernel_info* ansor_find_kernel(const ansor_kernel_info* table, int count,
                                           const char* name) {
  if (table == nullptr || name == nullptr)
    return nullptr;
  for (int i = 0; i < count; ++i) {
    if (table[i].name != nullptr && std::strcmp(table[i].name, name) == 0)
      return &table[i];
  }
  return nullptr;
}
