// Accuracy of the vector math functions (vector_math.h) over their whole float domain, against
// the same functions evaluated in double. This file is compiled with the kernels' flags
// (ANSOR_KERNEL_FLAGS: -march=native, FMA contraction), so it checks the code kernels run.
//
// Inputs: every kStride-th float bit pattern (all binades, subnormals, infinities and NaNs), plus
// dense sweeps where the functions are delicate (tails, underflow and overflow boundaries, log
// near 0 and 1). Errors are in ulp of the correctly rounded result, with subnormal results
// measured in the subnormal spacing 2^-149 and an infinite result counted as 2^128. The bounds
// asserted here are the ones docs/vector_math.md states.
#include "ansor/kernel_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <limits>
#include <vector>

#include "../sanitized_build.h"

namespace {

// Fewer points under the sanitizers, which make the double references several times slower.
constexpr uint32_t kStride = ansor_test::kSanitizedBuild ? 16411 : 2053;  // primes: varied mantissas
constexpr int kDensePoints = ansor_test::kSanitizedBuild ? 20000 : 200000;  // per dense range

template <int N>
using fvec = ansor_rt::vec<float, N>;

constexpr float kInf = std::numeric_limits<float>::infinity();

float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// |got - ref| in units of the float spacing at ref.
double ulp_error(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : HUGE_VAL;
  if (std::isinf(static_cast<float>(ref)) && got == static_cast<float>(ref)) return 0;  // overflows as it should
  const double g = std::isinf(got) ? std::copysign(0x1p128, got) : got;
  int exponent;
  std::frexp(std::min(std::fabs(ref), static_cast<double>(FLT_MAX)), &exponent);
  return std::fabs(g - ref) / std::ldexp(1.0, std::max(exponent, -125) - 24);
}

std::vector<float> sweep_inputs(std::initializer_list<std::pair<float, float>> dense) {
  std::vector<float> in;
  for (uint64_t b = 0; b <= 0xffffffffu; b += kStride) in.push_back(float_of(static_cast<uint32_t>(b)));
  for (auto [lo, hi] : dense)
    for (int i = 0; i < kDensePoints; ++i) in.push_back(lo + (hi - lo) * static_cast<float>(i) / kDensePoints);
  for (float special : {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                        FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX})
    in.push_back(special);
  in.resize((in.size() + 15) / 16 * 16, 1.0f);
  return in;
}

template <int N, class F>
std::vector<float> apply(const std::vector<float>& in, F f) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i < in.size(); i += N) ansor_rt::vstore<float, N>(&out[i], f(ansor_rt::vload<float, N>(&in[i])));
  return out;
}

// The vector function with N = 16, checked bitwise against N = 4 and 8.
template <template <int> class Fn>
std::vector<float> evaluate(const std::vector<float>& in) {
  std::vector<float> out = apply<16>(in, [](fvec<16> x) { return Fn<16>::v(x); });
  std::vector<float> out4 = apply<4>(in, [](fvec<4> x) { return Fn<4>::v(x); });
  std::vector<float> out8 = apply<8>(in, [](fvec<8> x) { return Fn<8>::v(x); });
  EXPECT_EQ(std::memcmp(out.data(), out4.data(), out.size() * sizeof(float)), 0) << "N = 4 differs from N = 16";
  EXPECT_EQ(std::memcmp(out.data(), out8.data(), out.size() * sizeof(float)), 0) << "N = 8 differs from N = 16";
  return out;
}

// Checks the maximum ulp error against `bound` and that the scalar path (scalar(x) in float,
// what kernels run outside vectorised loops) agrees with the vector one to `agree` relative to
// max(1, |scalar|), the measure of the output tolerance rule (generator/dag/output_tolerance.h).
template <template <int> class Fn, class Ref, class Scalar>
void check_unary(const char* name, std::initializer_list<std::pair<float, float>> dense, Ref ref, Scalar scalar,
                 double bound, double agree) {
  const std::vector<float> in = sweep_inputs(dense);
  const std::vector<float> out = evaluate<Fn>(in);
  double worst = 0, worst_agree = 0;
  float worst_x = 0, worst_agree_x = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double e = ulp_error(out[i], ref(static_cast<double>(in[i])));
    if (!(e <= worst)) worst = e, worst_x = in[i];
    const float s = scalar(in[i]);
    const double d = std::isnan(s) || std::isnan(out[i]) || s == out[i]
                         ? (std::isnan(s) == std::isnan(out[i]) ? 0 : HUGE_VAL)
                         : std::fabs(static_cast<double>(out[i]) - s) / std::max(1.0, std::fabs(static_cast<double>(s)));
    if (!(d <= worst_agree)) worst_agree = d, worst_agree_x = in[i];
  }
  std::printf("[ %-8s ] %zu inputs: max error %.3g ulp at %a; vector - scalar %.3g at %a\n", name, in.size(), worst,
              static_cast<double>(worst_x), worst_agree, static_cast<double>(worst_agree_x));
  EXPECT_LE(worst, bound) << name << " at " << worst_x;
  EXPECT_LE(worst_agree, agree) << name << " at " << worst_agree_x;
}

#define VECTOR_FUNCTION(Name, call)                            \
  template <int N>                                             \
  struct Name {                                                \
    static fvec<N> v(fvec<N> x) { return ansor_rt::call<N>(x); } \
  };
VECTOR_FUNCTION(Exp, vexp)
VECTOR_FUNCTION(Log, vlog)
VECTOR_FUNCTION(Sqrt, vsqrt)
VECTOR_FUNCTION(Rsqrt, vrsqrt)
VECTOR_FUNCTION(Tanh, vtanh)
VECTOR_FUNCTION(Sigmoid, vsigmoid)
VECTOR_FUNCTION(Erf, verf)
VECTOR_FUNCTION(Gelu, vgelu)
VECTOR_FUNCTION(Abs, vabs)
VECTOR_FUNCTION(Floor, vfloor)
VECTOR_FUNCTION(Ceil, vceil)
VECTOR_FUNCTION(Relu, vrelu)
#undef VECTOR_FUNCTION

// The agreement allowed between vector and scalar paths (relative to max(1, |value|)): the sum of
// both paths' errors, 2^-21 (4 ulp at 1); output_tolerance() allows each call its ulp bound plus 2.
constexpr double kAgree = 0x1p-21;

double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ref_gelu(double x) { return 0.5 * x * std::erfc(-x * 0.70710678118654752440); }
// vgelu returns -0 where the negative tail falls below FLT_MIN, rather than a (slow) subnormal.
double ref_gelu_tail_flushed(double x) {
  const double g = ref_gelu(x);
  return x < -1 && std::fabs(g) < FLT_MIN ? -0.0 : g;
}

TEST(VectorMath, Exp) {
  check_unary<Exp>("exp", {{-104.0f, -87.0f}, {-10.0f, 10.0f}, {-0.01f, 0.01f}, {80.0f, 89.0f}},
                   [](double x) { return std::exp(x); }, [](float x) { return std::exp(x); }, 1.5, kAgree);
}

TEST(VectorMath, Log) {
  check_unary<Log>("log", {{0.5f, 2.0f}, {0.99f, 1.01f}, {0.0f, 1e-37f}, {1.0f, 1e6f}},
                   [](double x) { return std::log(x); }, [](float x) { return std::log(x); }, 1.5, kAgree);
}

TEST(VectorMath, SqrtAndRsqrtAreCorrectlyRounded) {
  check_unary<Sqrt>("sqrt", {{0.0f, 4.0f}}, [](double x) { return std::sqrt(x); }, [](float x) { return std::sqrt(x); }, 0.5,
                    0);
  check_unary<Rsqrt>("rsqrt", {{0.0f, 4.0f}}, [](double x) { return 1.0 / std::sqrt(x); },
                     [](float x) { return ansor_rt::rsqrt(x); }, 1.5, 0);
}

TEST(VectorMath, Tanh) {
  check_unary<Tanh>("tanh", {{-10.0f, 10.0f}, {-1.0f, 1.0f}, {0.55f, 0.7f}},
                    [](double x) { return std::tanh(x); }, [](float x) { return std::tanh(x); }, 2.5, kAgree);
}

TEST(VectorMath, Sigmoid) {
  check_unary<Sigmoid>("sigmoid", {{-104.0f, -80.0f}, {-20.0f, 20.0f}}, ref_sigmoid,
                       [](float x) { return ansor_rt::sigmoid(x); }, 3.0, kAgree);
}

TEST(VectorMath, Erf) {
  check_unary<Erf>("erf", {{-5.0f, 5.0f}, {0.7f, 0.8f}, {-1e-3f, 1e-3f}}, [](double x) { return std::erf(x); },
                   [](float x) { return std::erf(x); }, 2.5, kAgree);
}

// Without FMA (targets below AVX2: SSE2 alone, as -march=x86-64 builds run) the polynomials'
// products round separately, which costs gelu's tail about one ulp more.
#ifdef __FMA__
constexpr double kGeluBound = 6.0;
#else
constexpr double kGeluBound = 7.0;
#endif

// The scalar gelu (x/2 (1 + erff(x / sqrt(2))) in float) loses relative accuracy in the negative
// tail where 1 + erf cancels: agreement is absolute there, as tuning's check measures it.
TEST(VectorMath, Gelu) {
  check_unary<Gelu>("gelu", {{-16.0f, 16.0f}, {-4.0f, 4.0f}, {-1.2f, -0.9f}, {-14.0f, -12.0f}}, ref_gelu_tail_flushed,
                    [](float x) { return ansor_rt::gelu(x); }, kGeluBound, kAgree);
}

// A subnormal result costs a microcode assist per instruction that makes or reads it; the
// negative tail of gelu is where random data reaches them (|x| > 13). Every float of that range:
// normal results stay (within the bound, above) and the rest are -0.
TEST(VectorMath, GeluTailHasNoSubnormalResults) {
  for (float x = -12.5f; x > -15.0f; x = std::nextafter(x, -kInf)) {
    const float got = ansor_rt::vgelu<16>(ansor_rt::vbroadcast<float, 16>(x))[0];
    ASSERT_NE(std::fpclassify(got), FP_SUBNORMAL) << "gelu(" << x << ") = " << got;
    ASSERT_EQ(got == 0.0f, std::fabs(ref_gelu(x)) < FLT_MIN) << "gelu(" << x << ") = " << got;
  }
}

TEST(VectorMath, ExactFunctions) {
  check_unary<Abs>("abs", {{-2.0f, 2.0f}}, [](double x) { return std::fabs(x); }, [](float x) { return std::abs(x); }, 0, 0);
  check_unary<Floor>("floor", {{-10.0f, 10.0f}, {8388000.0f, 8389000.0f}, {-8389000.0f, -8388000.0f}},
                     [](double x) { return std::floor(x); }, [](float x) { return std::floor(x); }, 0, 0);
  check_unary<Ceil>("ceil", {{-10.0f, 10.0f}, {8388000.0f, 8389000.0f}, {-8389000.0f, -8388000.0f}},
                    [](double x) { return std::ceil(x); }, [](float x) { return std::ceil(x); }, 0, 0);
  check_unary<Relu>("relu", {{-2.0f, 2.0f}}, [](double x) { return x < 0 ? 0.0 : x; },
                    [](float x) { return ansor_rt::relu(x); }, 0, 0);
}

// tf32() lane by lane, bitwise: on random bit patterns (NaNs, infinities and subnormals among
// them) the vector and the scalar forms agree.
TEST(VectorMath, Tf32IsTheScalarRoundingInEveryLane) {
  std::mt19937 random(99);
  for (int round = 0; round < 20000; ++round) {
    fvec<16> x;
    for (int lane = 0; lane < 16; ++lane) {
      const uint32_t bits = static_cast<uint32_t>(random());
      float value;
      std::memcpy(&value, &bits, sizeof value);
      x[lane] = value;
    }
    const fvec<16> rounded = ansor_rt::vtf32<16>(x);
    for (int lane = 0; lane < 16; ++lane) {
      const float vector_lane = rounded[lane], scalar = ansor_rt::tf32(static_cast<float>(x[lane]));
      uint32_t vector_bits, scalar_bits;
      std::memcpy(&vector_bits, &vector_lane, sizeof vector_bits);
      std::memcpy(&scalar_bits, &scalar, sizeof scalar_bits);
      ASSERT_EQ(vector_bits, scalar_bits) << "lane " << lane << " of round " << round;
    }
  }
}

// Signs of zeros and infinities, which ulp errors do not see.
TEST(VectorMath, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  auto one = [](auto f, float x) { return f(ansor_rt::vbroadcast<float, 16>(x))[0]; };
  auto same = [](float a, float b) { return bits_of(a) == bits_of(b) || (std::isnan(a) && std::isnan(b)); };
  struct Case {
    const char* name;
    fvec<16> (*f)(fvec<16>);
    float x, expected;
  };
  const Case cases[] = {
      {"exp", Exp<16>::v, -kInf, 0.0f},       {"exp", Exp<16>::v, kInf, kInf},        {"exp", Exp<16>::v, -0.0f, 1.0f},
      {"exp", Exp<16>::v, -104.0f, 0.0f},     {"exp", Exp<16>::v, 89.0f, kInf},       {"exp", Exp<16>::v, nan, nan},
      {"exp", Exp<16>::v, tiny, 1.0f},        {"log", Log<16>::v, 0.0f, -kInf},       {"log", Log<16>::v, -0.0f, -kInf},
      {"log", Log<16>::v, -1.0f, nan},        {"log", Log<16>::v, -kInf, nan},        {"log", Log<16>::v, kInf, kInf},
      {"log", Log<16>::v, 1.0f, 0.0f},        {"log", Log<16>::v, nan, nan},          {"tanh", Tanh<16>::v, -0.0f, -0.0f},
      {"tanh", Tanh<16>::v, kInf, 1.0f},      {"tanh", Tanh<16>::v, -kInf, -1.0f},    {"tanh", Tanh<16>::v, nan, nan},
      {"tanh", Tanh<16>::v, -tiny, -tiny},    {"sigmoid", Sigmoid<16>::v, kInf, 1.0f}, {"sigmoid", Sigmoid<16>::v, -kInf, 0.0f},
      {"sigmoid", Sigmoid<16>::v, -0.0f, 0.5f}, {"sigmoid", Sigmoid<16>::v, nan, nan}, {"erf", Erf<16>::v, -0.0f, -0.0f},
      {"erf", Erf<16>::v, kInf, 1.0f},        {"erf", Erf<16>::v, -kInf, -1.0f},      {"erf", Erf<16>::v, nan, nan},
      {"gelu", Gelu<16>::v, -0.0f, -0.0f},    {"gelu", Gelu<16>::v, kInf, kInf},      {"gelu", Gelu<16>::v, -kInf, nan},
      {"gelu", Gelu<16>::v, -20.0f, -0.0f},   {"gelu", Gelu<16>::v, 20.0f, 20.0f},    {"gelu", Gelu<16>::v, nan, nan},
      {"sqrt", Sqrt<16>::v, -0.0f, -0.0f},    {"sqrt", Sqrt<16>::v, -1.0f, nan},      {"rsqrt", Rsqrt<16>::v, 0.0f, kInf},
      {"rsqrt", Rsqrt<16>::v, -0.0f, -kInf},  {"rsqrt", Rsqrt<16>::v, kInf, 0.0f},    {"abs", Abs<16>::v, -0.0f, 0.0f},
      {"floor", Floor<16>::v, -0.0f, -0.0f},  {"floor", Floor<16>::v, -0.5f, -1.0f},  {"floor", Floor<16>::v, -kInf, -kInf},
      {"ceil", Ceil<16>::v, -0.5f, -0.0f},    {"ceil", Ceil<16>::v, nan, nan},        {"relu", Relu<16>::v, -0.0f, -0.0f},
      {"relu", Relu<16>::v, nan, nan},        {"exp", Exp<16>::v, -tiny, 1.0f},       {"exp", Exp<16>::v, -103.0f, tiny},
      {"log", Log<16>::v, tiny, -0x1.9d1da0p+6f}, {"erf", Erf<16>::v, tiny, tiny},    {"erf", Erf<16>::v, -tiny, -tiny},
      {"erf", Erf<16>::v, 4.5f, 1.0f},        {"tanh", Tanh<16>::v, 20.0f, 1.0f},     {"sigmoid", Sigmoid<16>::v, tiny, 0.5f},
      {"gelu", Gelu<16>::v, tiny, tiny},     {"gelu", Gelu<16>::v, -tiny, -0.0f},    {"gelu", Gelu<16>::v, 0.0f, 0.0f},
      {"gelu", Gelu<16>::v, FLT_MAX, FLT_MAX}, {"gelu", Gelu<16>::v, -FLT_MAX, -0.0f}, {"gelu", Gelu<16>::v, -14.5f, -0.0f},
      {"gelu", Gelu<16>::v, -14.0f, -0.0f},   {"gelu", Gelu<16>::v, -13.15f, -0.0f},
  };
  for (const Case& c : cases) EXPECT_TRUE(same(one(c.f, c.x), c.expected)) << c.name << "(" << c.x << ") = " << one(c.f, c.x);
}

fvec<16> pow16(fvec<16> x, fvec<16> y) { return ansor_rt::vpow<16>(x, y); }

// pow over pairs: x from a coarse bit-pattern sweep and dense ranges near 1 (where large
// exponents reach the overflow and underflow boundaries), y integers, halves and arbitrary
// values; checked against std::pow in double and, for special values, against std::pow in float.
TEST(VectorMath, Pow) {
  std::vector<float> xs, ys;
  // Signaling NaNs are left out: std::pow(sNaN, 0) is NaN, vpow treats every NaN as quiet (1).
  for (uint64_t b = 0; b <= 0xffffffffu; b += kStride * 211)
    if (!std::isnan(float_of(static_cast<uint32_t>(b)))) xs.push_back(float_of(static_cast<uint32_t>(b)));
  for (int i = 0; i < 400; ++i) xs.push_back(0.5f + 1.5f * static_cast<float>(i) / 400);
  for (float y = -40.0f; y <= 40.0f; y += 0.5f) ys.push_back(y);
  for (float y : {-150.5f, -127.0f, 0.1f, 0.3333f, 1e-6f, 77.7f, 128.0f, 1e7f, 16777217.0f, -16777215.0f, 1e30f})
    ys.push_back(y);
  for (int i = 0; i < 60; ++i) ys.push_back(-300.0f + 10.0f * static_cast<float>(i) + 0.37f);
  std::vector<float> specials = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, kInf, -kInf,
                                 std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), 3.0f, -3.0f};
  xs.insert(xs.end(), specials.begin(), specials.end());
  ys.insert(ys.end(), specials.begin(), specials.end());
  std::vector<float> in_x, in_y;
  for (float x : xs)
    for (float y : ys) in_x.push_back(x), in_y.push_back(y);
  in_x.resize((in_x.size() + 15) / 16 * 16, 1.0f);
  in_y.resize(in_x.size(), 1.0f);
  double worst = 0;
  size_t checked_specials = 0;
  for (size_t i = 0; i < in_x.size(); i += 16) {
    const fvec<16> r = pow16(ansor_rt::vload<float, 16>(&in_x[i]), ansor_rt::vload<float, 16>(&in_y[i]));
    const ansor_rt::vec<float, 4> r4 = ansor_rt::vpow<4>(ansor_rt::vload<float, 4>(&in_x[i]), ansor_rt::vload<float, 4>(&in_y[i]));
    for (int lane = 0; lane < 16; ++lane) {
      const float x = in_x[i + lane], y = in_y[i + lane], got = r[lane];
      if (lane < 4) {
        EXPECT_EQ(bits_of(got), bits_of(r4[lane])) << "N = 4 differs at pow(" << x << ", " << y << ")";
      }
      const float scalar = std::pow(x, y);
      if (!std::isfinite(x) || !std::isfinite(y) || x == 0.0f || y == 0.0f) {
        ++checked_specials;
        EXPECT_TRUE(bits_of(got) == bits_of(scalar) || (std::isnan(got) && std::isnan(scalar)))
            << "pow(" << x << ", " << y << ") = " << got << " instead of " << scalar;
        continue;
      }
      const double e = ulp_error(got, std::pow(static_cast<double>(x), static_cast<double>(y)));
      EXPECT_LE(e, 1.0) << "pow(" << x << ", " << y << ") = " << got;
      worst = std::max(worst, e);
    }
  }
  std::printf("[ pow      ] %zu inputs: max error %.3g ulp; %zu special results bitwise equal to std::pow\n", in_x.size(), worst,
              checked_specials);
}

}  // namespace
