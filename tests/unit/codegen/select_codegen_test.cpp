// The C++ emitted for selects in vector statements: a condition the same in every lane (a pad
// stage's row and column tests when the channels are the vector) picks one whole vector instead
// of assembling the vector lane by lane, in f32 and in bf16.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codegen/cpp_generator.h"
#include "lower/lower.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

// The padding of an f32 or a bf16 image of 32 channels, the channels 16 lanes at a time.
std::string padding_code(const char* dtype) {
  auto dag = test::dag_of(test::parse(fmt::format("kernel k {{ X = input {}[6, 6, 32]\n"
                                                  " Y[h:8, w:8, c:32] = select(h >= 1 && h < 7 && w >= 1 && w < 7, X[h - 1, w - 1, c], 0.0) }}",
                                                  dtype)),
                          "k");
  State state(dag);
  state.apply(std::make_shared<SplitStep>(1, 2, std::vector<int64_t>{16}));  // c.0, c.1
  state.apply(std::make_shared<AnnotateStep>(1, 3, IterAnnotation::Vectorize));
  const CppGenerator cpp;
  return cpp.kernel_definitions(lower_state(state, "k"), state.dag(), "k", "k", "test");
}

TEST(SelectCodegenTest, AConditionTheSameInEveryLanePicksAWholeVector) {
  const std::string code = padding_code("f32");
  EXPECT_NE(code.find("? ansor_rt::vload<float, 16>(&X["), std::string::npos) << code;
  EXPECT_EQ(code.find("ansor_rt::vec<float, 16>{"), std::string::npos) << code;
}

// bf16 values are computed as float vectors: the chosen side is the widened load, and no lane is
// converted on its own.
TEST(SelectCodegenTest, ABf16PaddingPicksAWholeVectorToo) {
  const std::string code = padding_code("bf16");
  EXPECT_NE(code.find("? ansor_rt::vload_bf16<16>(&X["), std::string::npos) << code;
  EXPECT_EQ(code.find("ansor_rt::vec<float, 16>{"), std::string::npos) << code;
  EXPECT_EQ(code.find("bf16_to_f32"), std::string::npos) << code;
}

}  // namespace
}  // namespace ansor
