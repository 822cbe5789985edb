// The consumer's C++ program: calls every kernel of consumer_kernels.h on random inputs and
// checks every output element against a reference computed here with plain loops in double
// precision, then calls the kernels again through the generic table consumer_kernels_kernels().
// Exits non-zero on any mismatch.
#include "consumer_kernels.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;
std::mt19937 rng(20240611);

std::vector<float> random_floats(size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int32_t> random_ints(size_t n) {
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

void fail(const std::string& message) {
  std::fprintf(stderr, "FAIL: %s\n", message.c_str());
  ++failures;
}

// A reference value and the sum of the magnitudes of the terms that produced it: rounding
// error in float grows with both the number of terms and their size.
struct Expected {
  double value;
  double magnitude;
  int terms;
};

void check_floats(const char* what, const float* got, const std::vector<Expected>& want) {
  int bad = 0;
  double max_error = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = std::fabs(got[i] - want[i].value);
    double tolerance = 1e-6 + 4.0 * FLT_EPSILON * want[i].terms * want[i].magnitude;
    max_error = std::fmax(max_error, error);
    if (!(error <= tolerance) && bad++ < 5)
      std::fprintf(stderr, "  %s[%zu] = %.9g, expected %.9g (tolerance %.3g)\n", what, i, got[i], want[i].value, tolerance);
  }
  if (bad)
    fail(std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(want.size()) + " elements differ");
  else
    std::printf("%s: all %zu elements match the reference (max error %.3g)\n", what, want.size(), max_error);
}

void check_ints(const char* what, const int32_t* got, const std::vector<int64_t>& want) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ < 5)
      std::fprintf(stderr, "  %s[%zu] = %d, expected %lld\n", what, i, got[i], static_cast<long long>(want[i]));
  if (bad)
    fail(std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(want.size()) + " elements differ");
  else
    std::printf("%s: all %zu elements match the reference exactly\n", what, want.size());
}

void check_status(const char* what, int status) {
  if (status != 0) fail(std::string(what) + " returned " + std::to_string(status));
}

// ---- The kernels of kernels.def with their references ------------------------------------

constexpr int kM = 24, kK = 19, kN = 13;

std::vector<Expected> matmul_reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<Expected> c(kM * kN);
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      Expected e{0, 0, kK};
      for (int k = 0; k < kK; ++k) {
        double term = double(a[i * kK + k]) * b[k * kN + j];
        e.value += term;
        e.magnitude += std::fabs(term);
      }
      c[i * kN + j] = e;
    }
  return c;
}

void test_matmul() {
  std::vector<float> a = random_floats(kM * kK), b = random_floats(kK * kN), c(kM * kN, NAN);
  check_status("consumer_kernels_matmul", consumer_kernels_matmul(a.data(), b.data(), c.data()));
  check_floats("matmul C[24, 13]", c.data(), matmul_reference(a, b));
}

constexpr int kC = 3, kF = 4, kH = 9, kW = 9, kR = 3;

void test_conv2d_bias_relu() {
  std::vector<float> x = random_floats(kC * kH * kW), w = random_floats(kF * kC * kR * kR), bias = random_floats(kF);
  std::vector<float> y(kF * kH * kW, NAN);
  check_status("consumer_kernels_conv2d_bias_relu",
               consumer_kernels_conv2d_bias_relu(x.data(), w.data(), bias.data(), y.data()));
  std::vector<Expected> want(y.size());
  for (int f = 0; f < kF; ++f)
    for (int h = 0; h < kH; ++h)
      for (int v = 0; v < kW; ++v) {
        Expected e{bias[f], std::fabs(bias[f]), kC * kR * kR + 1};
        for (int c = 0; c < kC; ++c)
          for (int r = 0; r < kR; ++r)
            for (int s = 0; s < kR; ++s) {
              int ih = h + r - 1, iw = v + s - 1;  // stride 1, padding 1
              if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
              double term = double(x[(c * kH + ih) * kW + iw]) * w[((f * kC + c) * kR + r) * kR + s];
              e.value += term;
              e.magnitude += std::fabs(term);
            }
        e.value = std::fmax(e.value, 0.0);
        want[(f * kH + h) * kW + v] = e;
      }
  check_floats("conv2d_bias_relu Y[1, 4, 9, 9]", y.data(), want);
}

constexpr int kRows = 6, kCols = 37;

std::vector<Expected> softmax_reference(const std::vector<float>& x) {
  std::vector<Expected> y(x.size());
  for (int i = 0; i < kRows; ++i) {
    double max = x[i * kCols], sum = 0;
    for (int j = 0; j < kCols; ++j) max = std::fmax(max, x[i * kCols + j]);
    for (int j = 0; j < kCols; ++j) sum += std::exp(x[i * kCols + j] - max);
    for (int j = 0; j < kCols; ++j) y[i * kCols + j] = {std::exp(x[i * kCols + j] - max) / sum, 1.0, kCols};
  }
  return y;
}

void test_softmax() {
  std::vector<float> x = random_floats(kRows * kCols), y(x.size(), NAN);
  check_status("consumer_kernels_softmax", consumer_kernels_softmax(x.data(), y.data()));
  check_floats("softmax Y[6, 37]", y.data(), softmax_reference(x));
}

constexpr int kIntRows = 8, kIntCols = 11;

std::vector<int64_t> int_dot_reference(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int64_t> s(kIntRows);
  for (int i = 0; i < kIntRows; ++i) {
    s[i] = 5;
    for (int k = 0; k < kIntCols; ++k) s[i] += int64_t(a[i * kIntCols + k]) * b[k];
  }
  return s;
}

void test_int_dot() {
  std::vector<int32_t> a = random_ints(kIntRows * kIntCols), b = random_ints(kIntCols), s(kIntRows, -1);
  check_status("consumer_kernels_int_dot", consumer_kernels_int_dot(a.data(), b.data(), s.data()));
  check_ints("int_dot S[8]", s.data(), int_dot_reference(a, b));
}

// ---- The generic table ---------------------------------------------------------------------

struct ArgSpec {
  ansor_dtype dtype;
  std::vector<int64_t> shape;
  int is_output;
};

void check_descriptor(const ansor_kernel_info* info, const char* name, const std::vector<ArgSpec>& args) {
  if (!info) return fail(std::string("the table has no kernel ") + name);
  if (info->num_args != int(args.size()))
    return fail(std::string(name) + ": the table lists " + std::to_string(info->num_args) + " arguments, expected " +
                std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const ansor_tensor_info& a = info->args[i];
    bool same = a.dtype == args[i].dtype && a.rank == int(args[i].shape.size()) && a.is_output == args[i].is_output;
    for (int d = 0; same && d < a.rank; ++d) same = a.shape[d] == args[i].shape[d];
    if (!same) fail(std::string(name) + ": argument " + std::to_string(i) + " (" + a.name + ") has the wrong descriptor");
  }
  if (!info->call) fail(std::string(name) + ": no call function in the table");
}

void test_table() {
  int count = -1;
  const ansor_kernel_info* table = consumer_kernels_kernels(&count);
  if (!table || count != 4) return fail("consumer_kernels_kernels() lists " + std::to_string(count) + " kernels, expected 4");
  const char* names[] = {"matmul", "conv2d_bias_relu", "softmax", "int_dot"};
  for (int i = 0; i < count; ++i)
    if (std::strcmp(table[i].name, names[i]) != 0) fail(std::string("table entry ") + std::to_string(i) + " is " + table[i].name);
  if (ansor_find_kernel(table, count, "no_such_kernel")) fail("ansor_find_kernel found a kernel that does not exist");

  const ansor_kernel_info* matmul = ansor_find_kernel(table, count, "matmul");
  check_descriptor(matmul, "matmul", {{ANSOR_DTYPE_F32, {kM, kK}, 0}, {ANSOR_DTYPE_F32, {kK, kN}, 0}, {ANSOR_DTYPE_F32, {kM, kN}, 1}});
  check_descriptor(ansor_find_kernel(table, count, "conv2d_bias_relu"), "conv2d_bias_relu",
                   {{ANSOR_DTYPE_F32, {1, kC, kH, kW}, 0}, {ANSOR_DTYPE_F32, {kF, kC, kR, kR}, 0},
                    {ANSOR_DTYPE_F32, {kF}, 0}, {ANSOR_DTYPE_F32, {1, kF, kH, kW}, 1}});
  const ansor_kernel_info* softmax = ansor_find_kernel(table, count, "softmax");
  check_descriptor(softmax, "softmax", {{ANSOR_DTYPE_F32, {kRows, kCols}, 0}, {ANSOR_DTYPE_F32, {kRows, kCols}, 1}});
  const ansor_kernel_info* int_dot = ansor_find_kernel(table, count, "int_dot");
  check_descriptor(int_dot, "int_dot",
                   {{ANSOR_DTYPE_I32, {kIntRows, kIntCols}, 0}, {ANSOR_DTYPE_I32, {kIntCols}, 0}, {ANSOR_DTYPE_I32, {kIntRows}, 1}});
  if (failures) return;
  std::printf("table: 4 kernels with the expected names and argument descriptors\n");

  // Calls through the table reach the same kernels.
  std::vector<float> a = random_floats(kM * kK), b = random_floats(kK * kN), c(kM * kN, NAN);
  void* matmul_args[] = {a.data(), b.data(), c.data()};
  check_status("matmul through the table", matmul->call(matmul_args));
  check_floats("matmul C[24, 13] through the table", c.data(), matmul_reference(a, b));

  std::vector<float> x = random_floats(kRows * kCols), y(x.size(), NAN);
  void* softmax_args[] = {x.data(), y.data()};
  check_status("softmax through the table", softmax->call(softmax_args));
  check_floats("softmax Y[6, 37] through the table", y.data(), softmax_reference(x));

  std::vector<int32_t> ia = random_ints(kIntRows * kIntCols), ib = random_ints(kIntCols), s(kIntRows, -1);
  void* int_dot_args[] = {ia.data(), ib.data(), s.data()};
  check_status("int_dot through the table", int_dot->call(int_dot_args));
  check_ints("int_dot S[8] through the table", s.data(), int_dot_reference(ia, ib));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // what was checked stays visible if a kernel crashes
  test_matmul();
  test_conv2d_bias_relu();
  test_softmax();
  test_int_dot();
  test_table();
  if (failures) {
    std::fprintf(stderr, "consumer_cpp: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("consumer_cpp: all kernels match their references (target %s)\n", consumer_kernels_target());
  return 0;
}
