// Reductions over a padding skip the taps that read it: the tests put such guards where they
// belong (around whole tiles, never inside one or on a GPU) and check the results against
// convolutions and poolings computed here directly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "lang/program.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "sampler/default_schedule.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kConvDef = R"(kernel conv {
  X = input f32[1, 5, 5, 4]
  W = const f32[3, 3, 4, 8]
  Y = conv2d_nhwc(X, W, stride = 1, pad = 1)
}
kernel pool {
  X = input f32[1, 2, 6, 6]
  Y = max_pool2d(X, size = 3, stride = 2, pad = 1)
}
)";

std::shared_ptr<const ComputeDAG> skip_test_dag(const std::string& kernel) {
  static const Program program = test::parse(kConvDef);
  return test::dag_of(program, kernel);
}

// The conditions of the statements that skip the identity's updates, printed.
std::vector<std::string> skip_conditions(const LoweredKernel& k) {
  std::vector<std::string> conditions;
  for_each_stmt(k.body, [&](const Stmt& s) {
    auto* i = s->as<IfThenElseNode>();
    if (i && i->role == CondRole::SkipIdentity) conditions.push_back(to_string(i->cond));
  });
  return conditions;
}

bool has_else(const LoweredKernel& k) {
  bool found = false;
  for_each_stmt(k.body, [&](const Stmt& s) {
    auto* i = s->as<IfThenElseNode>();
    found = found || (i && i->else_case);
  });
  return found;
}

// Y[0, h, w, k] = sum over (rc, ry, rx) of X[0, h + ry - 1, w + rx - 1, rc] * W[ry, rx, rc, k].
std::vector<double> conv_reference(const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> y(5 * 5 * 8, 0.0);
  for (int h = 0; h < 5; ++h)
    for (int c = 0; c < 5; ++c)
      for (int k = 0; k < 8; ++k)
        for (int ry = 0; ry < 3; ++ry)
          for (int rx = 0; rx < 3; ++rx)
            for (int rc = 0; rc < 4; ++rc) {
              const int ih = h + ry - 1, iw = c + rx - 1;
              if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
              y[(h * 5 + c) * 8 + k] += x[(ih * 5 + iw) * 4 + rc] * w[((ry * 3 + rx) * 4 + rc) * 8 + k];
            }
  return y;
}

void expect_conv_result(const LoweredKernel& k) {
  std::vector<std::vector<double>> args = test::random_args(k, 5);
  const std::vector<double> expected = conv_reference(args[0], args[1]);
  interpret(k, args);
  ASSERT_EQ(args[2].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(args[2][i], expected[i], 1e-4) << "element " << i;
}

TEST(IdentitySkipTest, NaiveConvolutionSkipsTheTapsOnThePadding) {
  // The naive nest h, w, k, rc, ry, rx: both the row test (h, ry) and the column test (w, rx)
  // sit around whole runs of reduction loops.
  State s(skip_test_dag("conv"));
  LoweredKernel k = lower_state(s, "conv");
  std::vector<std::string> conditions = skip_conditions(k);
  ASSERT_FALSE(conditions.empty()) << to_string(k);
  bool rows = false, columns = false;
  for (const std::string& c : conditions) {
    rows = rows || c.find("ry") != std::string::npos;
    columns = columns || c.find("rx") != std::string::npos;
  }
  EXPECT_TRUE(rows && columns) << to_string(k);
  expect_conv_result(k);
}

TEST(IdentitySkipTest, NoTestInsideATileOfOutputs) {
  // Output columns and channels inside the reduction loops (a register tile): the column test
  // would sit inside the tile and is not made; the row test stays around the tile.
  State s(skip_test_dag("conv"));
  const int conv = s.find_stage("Y");
  ASSERT_GE(conv, 0);
  // Leaves i0, i1, i2, i3, rc, ry, rx: order i0, i1, rc, ry, i2, i3, rx.
  s.apply(std::make_shared<ReorderStep>(conv, std::vector<int>{0, 1, 4, 5, 2, 3, 6}));
  LoweredKernel k = lower_state(s, "conv");
  std::vector<std::string> conditions = skip_conditions(k);
  ASSERT_EQ(conditions.size(), 1u) << to_string(k);
  EXPECT_NE(conditions[0].find("ry"), std::string::npos) << conditions[0];
  EXPECT_EQ(conditions[0].find("rx"), std::string::npos) << conditions[0];
  expect_conv_result(k);
}

TEST(IdentitySkipTest, TheCompiledProgramDoesNotUnswitchTheTests) {
  // Unswitching a test around whole tiles would copy the tiles for nothing.
  State s(skip_test_dag("conv"));
  LowerOptions as_scheduled;
  as_scheduled.expand_unrolled_loops = false;
  LoweredKernel compiled = lower_state(s, "conv");
  EXPECT_EQ(skip_conditions(compiled).size(), skip_conditions(lower_state(s, "conv", as_scheduled)).size());
  EXPECT_FALSE(has_else(compiled)) << to_string(compiled);
}

TEST(IdentitySkipTest, MaxPoolingSkipsThePaddingOfItsIdentity) {
  State s(skip_test_dag("pool"));
  LoweredKernel k = lower_state(s, "pool");
  EXPECT_FALSE(skip_conditions(k).empty()) << to_string(k);
  std::vector<std::vector<double>> args = test::random_args(k, 7);
  const std::vector<double> x = args[0];
  interpret(k, args);
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w) {
        double expected = -std::numeric_limits<double>::infinity();
        for (int r = 0; r < 3; ++r)
          for (int q = 0; q < 3; ++q) {
            const int ih = 2 * h + r - 1, iw = 2 * w + q - 1;
            if (ih >= 0 && ih < 6 && iw >= 0 && iw < 6) expected = std::max(expected, x[(c * 6 + ih) * 6 + iw]);
          }
        EXPECT_EQ(args[1][(c * 3 + h) * 3 + w], expected) << c << " " << h << " " << w;
      }
}

TEST(IdentitySkipTest, GpuProgramsKeepEveryTap) {
  // A block's threads must all reach the barriers that the skipped loops may hold.
  State s = default_schedule(skip_test_dag("conv"), SamplerContext::for_gpu(parse_target("cuda:sm_80")));
  LowerOptions options;
  options.target = parse_target("cuda:sm_80");
  EXPECT_TRUE(skip_conditions(lower_state(s, "conv", options)).empty());
}

}  // namespace
}  // namespace ansor
