// The C++ emitted for selects in vector statements: a condition the same in every lane (a pad
// stage's row and column tests when the channels are the vector) picks one whole vector instead
// of assembling the vector lane by lane.
#include <gtest/gtest.h>

#include "codegen/cpp_generator.h"
#include "lower/lower.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

TEST(SelectCodegenTest, AConditionTheSameInEveryLanePicksAWholeVector) {
  auto dag = test::dag_of(test::parse("kernel k { X = input f32[6, 6, 32]\n"
                                      " Y[h:8, w:8, c:32] = (h >= 1 && h < 7 && w >= 1 && w < 7) ? X[h - 1, w - 1, c] : 0.0 }"),
                          "k");
  State state(dag);
  state.apply(std::make_shared<SplitStep>(1, 2, std::vector<int64_t>{16}));  // c.0, c.1
  state.apply(std::make_shared<AnnotateStep>(1, 3, IterAnnotation::Vectorize));
  const CppGenerator cpp;
  std::string code = cpp.kernel_definitions(lower_state(state, "k"), state.dag(), "k", "k", "test");
  EXPECT_NE(code.find("? ansor_rt::vload<float, 16>(&X["), std::string::npos) << code;
  EXPECT_EQ(code.find("ansor_rt::vec<float, 16>{"), std::string::npos) << code;
}

}  // namespace
}  // namespace ansor
