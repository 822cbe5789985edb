// Tests of the kernel descriptor helpers: ansor_dtype_size and ansor_find_kernel.
#include "ansor/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

TEST(DtypeSize, MatchesStorageTypes) {
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_F32), sizeof(float));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_F64), sizeof(double));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_F16), sizeof(uint16_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_BF16), sizeof(uint16_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_I8), sizeof(int8_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_I16), sizeof(int16_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_I32), sizeof(int32_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_I64), sizeof(int64_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_U8), sizeof(uint8_t));
  EXPECT_EQ(ansor_dtype_size(ANSOR_DTYPE_BOOL), 1u);
}

int call_nothing(void* const*) { return 0; }
int pack_nothing(int, const void*, void*) { return 1; }
int64_t no_packed_elements(int) { return 0; }

const int64_t kShape[] = {4, 8};
const ansor_tensor_info kArgs[] = {
    {"x", ANSOR_DTYPE_F32, 2, kShape, 0, 0},
    {"y", ANSOR_DTYPE_F32, 2, kShape, 1, 0},
};
const ansor_kernel_info kTable[] = {
    {ANSOR_KERNEL_INFO_VERSION, "relu", "key-relu", "naive", 32.0, 2, kArgs, call_nothing, call_nothing, pack_nothing, no_packed_elements,
     ANSOR_DEVICE_CPU},
    {ANSOR_KERNEL_INFO_VERSION, "matmul", "key-matmul", "tuned", 512.0, 2, kArgs, call_nothing, call_nothing, pack_nothing,
     no_packed_elements, ANSOR_DEVICE_CPU},
    {ANSOR_KERNEL_INFO_VERSION, "softmax", "key-softmax", "default", 96.0, 2, kArgs, call_nothing, call_nothing, pack_nothing,
     no_packed_elements, ANSOR_DEVICE_CPU},
};

TEST(FindKernel, FindsEachKernelByName) {
  for (const ansor_kernel_info& kernel : kTable) {
    const ansor_kernel_info* found = ansor_find_kernel(kTable, 3, kernel.name);
    ASSERT_NE(found, nullptr) << kernel.name;
    EXPECT_EQ(found, &kernel);
  }
  // Lookup is by content, not by pointer.
  const std::string name = "matmul";
  EXPECT_EQ(ansor_find_kernel(kTable, 3, name.c_str()), &kTable[1]);
}

TEST(FindKernel, MissingOrInvalidLookupsReturnNull) {
  EXPECT_EQ(ansor_find_kernel(kTable, 3, "conv2d"), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, 3, "matmu"), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, 3, ""), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, 3, nullptr), nullptr);
  EXPECT_EQ(ansor_find_kernel(nullptr, 3, "relu"), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, 0, "relu"), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, -1, "relu"), nullptr);
  EXPECT_EQ(ansor_find_kernel(kTable, 2, "softmax"), nullptr) << "count bounds the search";
}

} // namespace
