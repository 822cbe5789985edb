// Helpers for the kernel correctness tests: shaped tensors, seeded random inputs, calling a
// kernel through its typed C function and through the library table's call() and call_packed()
// (with poisoned outputs and checks that inputs stay unchanged), comparison with double-precision
// references, and the reference convolution that several tests share.
#ifndef ANSOR_TESTS_KERNELS_REFERENCE_H
#define ANSOR_TESTS_KERNELS_REFERENCE_H

#include "ansor_test_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kernel_tests {

// The dtype of a C element type; uint16_t is ambiguous (f16 or bf16) and must be named.
template <class T>
constexpr ansor_dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ANSOR_DTYPE_F32;
  else if constexpr (std::is_same_v<T, double>) return ANSOR_DTYPE_F64;
  else if constexpr (std::is_same_v<T, int8_t>) return ANSOR_DTYPE_I8;
  else if constexpr (std::is_same_v<T, int16_t>) return ANSOR_DTYPE_I16;
  else if constexpr (std::is_same_v<T, int32_t>) return ANSOR_DTYPE_I32;
  else if constexpr (std::is_same_v<T, int64_t>) return ANSOR_DTYPE_I64;
  else if constexpr (std::is_same_v<T, uint8_t>) return ANSOR_DTYPE_U8;
  else if constexpr (std::is_same_v<T, bool>) return ANSOR_DTYPE_BOOL;
  else static_assert(!std::is_same_v<T, T>, "f16 and bf16 tensors name their dtype");
}

bool is_float_dtype(ansor_dtype dtype);

// IEEE binary16 and bfloat16 bit patterns as values, and exactly representable values as bit
// patterns (written independently of the runtime's conversions).
double half_bits_to_double(uint16_t bits, ansor_dtype dtype);
uint16_t exact_half_bits(double value, ansor_dtype dtype);

// A dense row-major tensor. Element (i, j, ...) is t(i, j, ...), with bounds checks.
template <class T>
class Tensor {
 public:
  explicit Tensor(std::vector<int64_t> shape) : Tensor(std::move(shape), dtype_of<T>()) {}
  Tensor(std::vector<int64_t> shape, ansor_dtype dtype) : dtype_(dtype), shape_(std::move(shape)) {
    for (int64_t extent : shape_) size_ *= static_cast<size_t>(extent);
    values_ = std::make_unique<T[]>(size_);
  }

  ansor_dtype dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  T* data() { return values_.get(); }
  const T* data() const { return values_.get(); }
  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }

  template <class... Index>
  T& operator()(Index... index) {
    return values_[offset({static_cast<int64_t>(index)...})];
  }
  template <class... Index>
  const T& operator()(Index... index) const {
    return values_[offset({static_cast<int64_t>(index)...})];
  }

  // Element i as a number: f16 and bf16 bit patterns decoded, bool read as its byte.
  double value(size_t i) const {
    if constexpr (std::is_same_v<T, uint16_t>) {
      return half_bits_to_double(values_[i], dtype_);
    } else if constexpr (std::is_same_v<T, bool>) {
      unsigned char byte;
      std::memcpy(&byte, &values_[i], 1);
      return byte;
    } else {
      return static_cast<double>(values_[i]);
    }
  }

  // The same elements under another shape with as many elements.
  Tensor reshaped(std::vector<int64_t> shape) const {
    Tensor out(std::move(shape), dtype_);
    if (out.size_ != size_) throw std::invalid_argument("reshaped: element counts differ");
    std::memcpy(out.data(), data(), bytes());
    return out;
  }

 private:
  size_t offset(std::initializer_list<int64_t> index) const {
    if (index.size() != shape_.size()) throw std::out_of_range("tensor indexed with the wrong rank");
    size_t flat = 0, d = 0;
    for (int64_t i : index) {
      if (i < 0 || i >= shape_[d]) throw std::out_of_range("tensor index out of bounds");
      flat = flat * static_cast<size_t>(shape_[d]) + static_cast<size_t>(i);
      ++d;
    }
    return flat;
  }

  ansor_dtype dtype_;
  std::vector<int64_t> shape_;
  size_t size_ = 1;
  std::unique_ptr<T[]> values_;
};

using Reference = Tensor<double>;

// Every element as a double (the inputs of a reference computation).
template <class T>
Reference widen(const Tensor<T>& t) {
  Reference out(t.shape());
  for (size_t i = 0; i < t.size(); ++i) out[i] = t.value(i);
  return out;
}

// Seeded uniform values in [lo, hi]: real for f32/f64, integers for integer dtypes, multiples of
// 1/64 for f16/bf16 (exact in both for |value| < 4), 0 or 1 for bool.
template <class T>
void fill_random(Tensor<T>& t, uint32_t seed, double lo = -1.0, double hi = 1.0);

// ---- Calling kernels ----------------------------------------------------------------------------

struct ArgBuffer {
  ansor_dtype dtype;
  const std::vector<int64_t>* shape;
  void* data;
  size_t bytes;
};

template <class T>
ArgBuffer arg_buffer(Tensor<T>& t) {
  return {t.dtype(), &t.shape(), static_cast<void*>(t.data()), t.bytes()};
}

const ansor_kernel_info* find_test_kernel(const std::string& name);

// Checks the table's description of the arguments against the buffers, fills every output with
// the first poison (NaN bytes for floats, 0xA5 otherwise) and keeps a copy of every input.
void prepare_call(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args,
                  std::vector<std::vector<unsigned char>>& inputs_before);

// After the typed call: checks the inputs against their copies, then calls the kernel again
// through the table, by call() and by call_packed() with its const inputs packed by pack(), each
// time with outputs holding the second poison (0x5A bytes), and requires outputs bitwise equal to
// the typed call's, so that every output byte was written, by every entry point alike. The
// outputs are left holding the typed call's results.
void check_table_call(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args,
                      const std::vector<std::vector<unsigned char>>& inputs_before);

// Calls kernel `name` through its typed function with the tensors in argument order (inputs,
// then outputs) and checks what every call must satisfy: the table lists the kernel with these
// dtypes and shapes, every entry point returns 0 and gives the same outputs, inputs are not
// modified, outputs are fully written.
// Use as ASSERT_NO_FATAL_FAILURE(call_kernel(...)).
template <class Fn, class... T>
void call_kernel(const std::string& name, Fn typed_function, Tensor<T>&... tensors) {
  const ansor_kernel_info* info = find_test_kernel(name);
  ASSERT_NE(info, nullptr) << "kernel " << name << " is not in the table";
  std::vector<ArgBuffer> args = {arg_buffer(tensors)...};
  std::vector<std::vector<unsigned char>> inputs_before;
  ASSERT_NO_FATAL_FAILURE(prepare_call(*info, args, inputs_before));
  ASSERT_EQ(typed_function(tensors.data()...), 0) << name;
  check_table_call(*info, args, inputs_before);
}

// ---- Comparing with references ------------------------------------------------------------------

// The tolerance of kernel `name`'s outputs under the project's one rule (output_tolerance() of
// its DAG, parsed from tests/kernels/kernels.def): relative to max(1, the largest |element| of
// the output), growing with the reductions and the approximate math the kernel holds.
double kernel_tolerance(const std::string& name);

// Every element of `actual` matches the reference under `tolerance` (within_output_tolerance():
// |actual - expected| <= tolerance * max(1, max |expected|); NaN matches only NaN); 0 is exact.
void expect_close_values(ansor_dtype dtype, const std::vector<int64_t>& actual_shape, const std::vector<double>& actual,
                         const Reference& expected, double tolerance);

template <class T>
void expect_close(const Tensor<T>& actual, const Reference& expected, double tolerance) {
  std::vector<double> values(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) values[i] = actual.value(i);
  expect_close_values(actual.dtype(), actual.shape(), values, expected, tolerance);
}


// ---- Shared references --------------------------------------------------------------------------

// Floor division and modulo (Python's // and %); exact for operands of up to 32 bits.
inline int64_t floor_div(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}
inline int64_t floor_mod(int64_t a, int64_t b) { return a - b * floor_div(a, b); }

struct ConvParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

// Grouped 2-d convolution, x[N, C, H, W] * w[K, C / groups, R, S] -> [N, K, OH, OW], with zero
// padding: y[n, k, oy, ox] = sum over the group's channels c and window (r, s) of
// x[n, c, oy * stride - pad + r * dilation, ...] * w[k, c - first channel of the group, r, s].
Reference conv2d_nchw_reference(const Reference& x, const Reference& w, const ConvParams& p);

}  // namespace kernel_tests

#endif  // ANSOR_TESTS_KERNELS_REFERENCE_H
