// The computation key: one per computation whatever its shape, another for another computation.
#include "dag/computation_key.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ansor {
namespace {

std::string key_of(const std::string& def) { return computation_key(*test::dag_of(test::parse(def), "k")); }

TEST(ComputationKeyTest, IntegersGoRealsStayUnlessAllNumbersGo) {
  const std::string text = "T2[i0:512, i1:30] = f32(select(i1 >= 1 && i1 < 29, T0[0, i1 - 1] * 1e-05, 0.0))\n";
  EXPECT_EQ(abstract_numbers(text, AbstractedNumbers::Integers), "T2[i0:#, i1:#] = f32(select(i1 >= # && i1 < #, T0[#, i1 - #] * 1e-05, 0.0))\n");
  EXPECT_EQ(abstract_numbers(text, AbstractedNumbers::All), "T2[i0:#, i1:#] = f32(select(i1 >= # && i1 < #, T0[#, i1 - #] * #, #))\n");
}

TEST(ComputationKeyTest, OneComputationAtTwoShapesSharesTheKey) {
  const std::string square = "kernel k { A = input f32[512, 512]\n B = const f32[512, 512]\n C = matmul(A, B) }";
  const std::string oblong = "kernel k { A = input f32[200, 512]\n B = const f32[512, 1000]\n C = matmul(A, B) }";
  EXPECT_EQ(key_of(square), key_of(oblong));
  EXPECT_NE(test::dag_of(test::parse(square), "k")->workload_key(), test::dag_of(test::parse(oblong), "k")->workload_key());
  // Padded convolutions over maps of other sizes and channels: the padding's bounds differ too.
  EXPECT_EQ(key_of("kernel k { X = input f32[1, 28, 28, 128]\n W = const f32[3, 3, 128, 128]\n Y = conv2d_nhwc(X, W, stride = 1, pad = 1) }"),
            key_of("kernel k { X = input f32[1, 35, 35, 96]\n W = const f32[3, 3, 96, 96]\n Y = conv2d_nhwc(X, W, stride = 1, pad = 1) }"));
}

TEST(ComputationKeyTest, AnotherComputationHasAnotherKey) {
  const std::string matmul = "kernel k { A = input f32[64, 32]\n B = const f32[32, 48]\n C = matmul(A, B) }";
  EXPECT_NE(key_of(matmul), key_of("kernel k { A = input f32[64, 32]\n B = const f32[32, 48]\n C = relu(matmul(A, B)) }"));
  EXPECT_NE(key_of(matmul), key_of("kernel k { A = input f32[64, 32]\n B = const f32[48, 32]\n C = dense(A, B) }"));
  EXPECT_NE(key_of(matmul), key_of("kernel k { A = input f64[64, 32]\n B = const f64[32, 48]\n C = matmul(A, B) }"));
  EXPECT_NE(key_of("kernel k { X = input f32[8]\n Y[i:8] = X[i] * 2.0 }"), key_of("kernel k { X = input f32[8]\n Y[i:8] = X[i] * 3.0 }"));
}

}  // namespace
}  // namespace ansor
