// The C++ emitted for parallel loops: a task that stores u8 or i8 values reads the kernel's
// pointers through copies of its own (a byte store may alias the lambda's references to them,
// and the compiler would reload them after every one); other tasks use the kernel's names.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codegen/cpp_generator.h"
#include "lower/lower.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

// Y = T(X * 2) over a 64 x 32 f32 input, the rows split among the threads.
std::string parallel_code(const char* dtype) {
  auto dag = test::dag_of(test::parse(fmt::format("kernel k {{ X = input f32[64, 32]\n Y[i:64, j:32] = {}(X[i, j] * 2.0) }}", dtype)), "k");
  State state(dag);
  state.apply(std::make_shared<AnnotateStep>(1, 0, IterAnnotation::Parallel));
  const CppGenerator cpp;
  return cpp.kernel_definitions(lower_state(state, "k"), state.dag(), "k", "k", "test");
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ParallelCodegenTest, ATaskStoringBytesReadsItsOwnCopiesOfThePointers) {
  for (const char* dtype : {"u8", "i8"}) {
    const std::string code = parallel_code(dtype);
    ASSERT_NE(code.find("ansor_rt::parallel_for("), std::string::npos) << code;
    EXPECT_NE(code.find("auto* const X_task = X;"), std::string::npos) << code;
    EXPECT_NE(code.find("auto* const Y_task = Y;"), std::string::npos) << code;
    EXPECT_NE(code.find("Y_task["), std::string::npos) << code;
    EXPECT_NE(code.find("X_task["), std::string::npos) << code;
    // Inside the task nothing reads the kernel's own names any more.
    EXPECT_EQ(count_of(code, " Y["), 0u) << code;
    EXPECT_EQ(count_of(code, "(X["), 0u) << code;
  }
}

TEST(ParallelCodegenTest, TasksThatStoreWiderValuesUseTheKernelsNames) {
  for (const char* dtype : {"f32", "i32", "bf16"}) {
    const std::string code = parallel_code(dtype);
    ASSERT_NE(code.find("ansor_rt::parallel_for("), std::string::npos) << code;
    EXPECT_EQ(code.find("_task"), std::string::npos) << dtype << "\n" << code;
  }
}

}  // namespace
}  // namespace ansor
