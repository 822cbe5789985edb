// The C++ emitted for vectorised partial reductions: the lanes of the partial results are
// combined by the runtime's tree helpers (ansor_rt::vreduce_*), not a chain of scalar
// operations, a division by a value the same in every lane becomes a multiplication by its
// reciprocal, and rows that no power of two divides still run in whole vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>

#include "codegen/cpp_generator.h"
#include "lower/codegen_decisions.h"
#include "lower/lower.h"
#include "sampler/default_schedule.h"
#include "test_support.h"

namespace ansor {
namespace {

std::string emitted_default(const std::string& kernel_text, int vector_lanes) {
  auto dag = test::dag_of(test::parse(kernel_text), "k");
  SamplerContext ctx;
  ctx.vector_lanes = vector_lanes;
  State state = default_schedule(dag, ctx);
  const CppGenerator cpp;
  return cpp.kernel_definitions(lower_state(state, "k"), state.dag(), "k", "k", "test");
}

TEST(ReductionCodegenTest, SoftmaxCombinesLanesByTreeHelpersAndMultipliesByTheReciprocal) {
  for (int lanes : {8, 16}) {
    std::string code = emitted_default("kernel k { X = input f32[128, 1000]\n Y = softmax(X, axis = -1) }", lanes);
    EXPECT_NE(code.find("ansor_rt::vreduce_max<float, "), std::string::npos) << code;
    EXPECT_NE(code.find("ansor_rt::vreduce_add<float, "), std::string::npos) << code;
    // No lane of a partial result combined on its own.
    EXPECT_FALSE(std::regex_search(code, std::regex("[^&\\w]\\w*_rf\\[[1-9]\\d*\\]\\)"))) << code;
    // Rows of 1000 in whole vectors of twice the width, the last 8 elements as one short vector.
    EXPECT_NE(code.find(fmt::format("ansor_rt::vexp<{}>(", 2 * lanes)), std::string::npos) << code;
    EXPECT_NE(code.find("ansor_rt::vexp<8>("), std::string::npos) << code;
    EXPECT_EQ(code.find("std::exp("), std::string::npos) << code;
    EXPECT_NE(code.find("* (1.0f / "), std::string::npos) << code;
    EXPECT_FALSE(std::regex_search(code, std::regex("vload<float, \\d+>\\([^;]*\\) / "))) << code;
  }
}

TEST(ReductionCodegenTest, NormsCombineLanesByTreeHelpers) {
  // Rows of 4096 keep 8 vectors of 16 partial results: 128, more than the stage's unroll pragma.
  std::string row_norm = emitted_default("kernel k { X = input f32[256, 4096]\n S[i:256] = sqrt(sum(k:4096, X[i, k] * X[i, k])) }", 16);
  EXPECT_NE(row_norm.find("ansor_rt::vreduce_add<float, "), std::string::npos) << row_norm;
  std::string layer_norm = emitted_default(
      "kernel k { X = input f32[128, 768]\n gamma = const f32[768]\n beta = const f32[768]\n"
      " Y = layer_norm(X, gamma, beta, axis = -1, eps = 1e-5) }",
      16);
  EXPECT_NE(layer_norm.find("ansor_rt::vreduce_add<float, "), std::string::npos) << layer_norm;
  EXPECT_FALSE(std::regex_search(layer_norm, std::regex("[^&\\w]\\w*_rf\\[[1-9]\\d*\\]\\)"))) << layer_norm;
}

// Lowering finds the runs of accumulation steps (on a CPU target; a GPU program has none), and
// the code generator prints one tree helper per run: it decides nothing of its own.
TEST(ReductionCodegenTest, EveryHorizontalReductionLoweringFoundIsOneTreeHelper) {
  auto dag = test::dag_of(test::parse("kernel k { X = input f32[128, 1000]\n Y = softmax(X, axis = -1) }"), "k");
  SamplerContext ctx;
  ctx.vector_lanes = 16;
  State state = default_schedule(dag, ctx);
  LoweredKernel lowered = lower_state(state, "k");
  ASSERT_FALSE(lowered.horizontal_reductions.empty());
  for (const auto& [store, length] : lowered.horizontal_reductions) EXPECT_GE(length, kMinHorizontalReduction);
  const std::string code = CppGenerator().kernel_definitions(lowered, state.dag(), "k", "k", "test");
  size_t helpers = 0;
  for (size_t at = code.find("ansor_rt::vreduce_"); at != std::string::npos; at = code.find("ansor_rt::vreduce_", at + 1)) ++helpers;
  EXPECT_EQ(helpers, lowered.horizontal_reductions.size()) << code;
  LowerOptions gpu;
  gpu.target = parse_target("cuda:sm_80");
  EXPECT_TRUE(lower_state(state, "k", gpu).horizontal_reductions.empty());
}

// An integer sum keeps its wrapping arithmetic: no float helper.
TEST(ReductionCodegenTest, IntegerReductionsAreLeftAlone) {
  std::string code = emitted_default("kernel k { X = input i32[64, 256]\n Y[i:64] = sum(k:256, X[i, k]) }", 16);
  EXPECT_EQ(code.find("vreduce_"), std::string::npos) << code;
}

}  // namespace
}  // namespace ansor
