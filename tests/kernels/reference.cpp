// Helpers for the kernel correctness tests: half-precision encodings, random fills, the checked
// kernel calls, comparison with references and the reference convolution.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>

#include "dag/output_tolerance.h"
#include "lang/program.h"

namespace kernel_tests {

bool is_float_dtype(ansor_dtype dtype) {
  return dtype == ANSOR_DTYPE_F32 || dtype == ANSOR_DTYPE_F64 || dtype == ANSOR_DTYPE_F16 || dtype == ANSOR_DTYPE_BF16;
}

double half_bits_to_double(uint16_t bits, ansor_dtype dtype) {
  if (dtype == ANSOR_DTYPE_BF16) {
    uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &wide, sizeof(value));
    return value;
  }
  double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

uint16_t exact_half_bits(double value, ansor_dtype dtype) {
  float narrow = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof(bits));
  if (static_cast<double>(narrow) != value) throw std::invalid_argument("not exact in float");
  if (dtype == ANSOR_DTYPE_BF16) {
    if ((bits & 0xffffu) != 0) throw std::invalid_argument("not exact in bfloat16");
    return static_cast<uint16_t>(bits >> 16);
  }
  uint32_t sign = (bits >> 16) & 0x8000u;
  if (narrow == 0.0f) return static_cast<uint16_t>(sign);
  int exponent = static_cast<int>((bits >> 23) & 0xffu) - 127;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent < -14 || exponent > 15 || (mantissa & 0x1fffu) != 0)
    throw std::invalid_argument("not a normal binary16 value");
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(exponent + 15) << 10 | mantissa >> 13);
}

template <class T>
void fill_random(Tensor<T>& t, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  if constexpr (std::is_same_v<T, uint16_t>) {
    std::uniform_int_distribution<int64_t> steps(std::llround(std::ceil(lo * 64)), std::llround(std::floor(hi * 64)));
    for (size_t i = 0; i < t.size(); ++i) t[i] = exact_half_bits(static_cast<double>(steps(rng)) / 64, t.dtype());
  } else if constexpr (std::is_same_v<T, bool>) {
    std::bernoulli_distribution coin;
    for (size_t i = 0; i < t.size(); ++i) t[i] = coin(rng);
  } else if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> uniform(static_cast<T>(lo), static_cast<T>(hi));
    for (size_t i = 0; i < t.size(); ++i) t[i] = uniform(rng);
  } else {
    std::uniform_int_distribution<int64_t> uniform(std::llround(lo), std::llround(hi));
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<T>(uniform(rng));
  }
}

template void fill_random(Tensor<float>&, uint32_t, double, double);
template void fill_random(Tensor<double>&, uint32_t, double, double);
template void fill_random(Tensor<uint16_t>&, uint32_t, double, double);
template void fill_random(Tensor<int8_t>&, uint32_t, double, double);
template void fill_random(Tensor<int32_t>&, uint32_t, double, double);
template void fill_random(Tensor<uint8_t>&, uint32_t, double, double);
template void fill_random(Tensor<bool>&, uint32_t, double, double);

const ansor_kernel_info* find_test_kernel(const std::string& name) {
  int count = 0;
  const ansor_kernel_info* table = ansor_test_kernels_kernels(&count);
  return ansor_find_kernel(table, count, name.c_str());
}

namespace {

bool same_bytes(const ArgBuffer& buffer, const std::vector<unsigned char>& bytes) {
  return std::memcmp(buffer.data, bytes.data(), bytes.size()) == 0;
}

std::vector<unsigned char> copy_bytes(const ArgBuffer& buffer) {
  const auto* begin = static_cast<const unsigned char*>(buffer.data);
  return std::vector<unsigned char>(begin, begin + buffer.bytes);
}

void expect_inputs_unchanged(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args,
                             const std::vector<std::vector<unsigned char>>& inputs_before, const char* which_call) {
  size_t input = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (info.args[i].is_output) continue;
    EXPECT_TRUE(same_bytes(args[i], inputs_before[input++]))
        << info.name << ": input " << info.args[i].name << " was modified by the " << which_call;
  }
}

std::string index_string(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
    flat /= static_cast<size_t>(shape[d]);
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < index.size(); ++d) out << (d ? ", " : "") << index[d];
  out << "]";
  return out.str();
}

// Calls `entry` (a table entry point) with `pointers` after poisoning the outputs with 0x5A bytes
// and requires every output byte to equal the typed call's.
void expect_same_outputs(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args, int (*entry)(void* const*),
                         const std::vector<void*>& pointers, const std::vector<std::vector<unsigned char>>& typed_outputs,
                         const char* which_call) {
  for (size_t i = 0; i < args.size(); ++i)
    if (info.args[i].is_output) std::memset(args[i].data, 0x5A, args[i].bytes);
  ASSERT_EQ(entry(pointers.data()), 0) << info.name << ": " << which_call;
  size_t output = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!info.args[i].is_output) continue;
    const std::vector<unsigned char>& typed = typed_outputs[output++];
    const auto* bytes = static_cast<const unsigned char*>(args[i].data);
    auto mismatch = std::mismatch(typed.begin(), typed.end(), bytes).first;
    if (mismatch != typed.end())
      ADD_FAILURE() << info.name << ": element "
                    << index_string(static_cast<size_t>(mismatch - typed.begin()) / ansor_dtype_size(info.args[i].dtype),
                                    *args[i].shape)
                    << " of output " << info.args[i].name << " differs between the typed call and the " << which_call
                    << ", or was not written";
  }
}

}  // namespace

void prepare_call(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args,
                  std::vector<std::vector<unsigned char>>& inputs_before) {
  ASSERT_EQ(info.num_args, static_cast<int>(args.size())) << info.name;
  inputs_before.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const ansor_tensor_info& arg = info.args[i];
    ASSERT_EQ(arg.dtype, args[i].dtype) << info.name << ": dtype of argument " << arg.name;
    ASSERT_EQ(std::vector<int64_t>(arg.shape, arg.shape + arg.rank), *args[i].shape) << info.name << ": shape of argument " << arg.name;
    if (arg.is_output) {
      std::memset(args[i].data, is_float_dtype(arg.dtype) ? 0xFF : 0xA5, args[i].bytes);
    } else {
      inputs_before.push_back(copy_bytes(args[i]));
    }
  }
}

void check_table_call(const ansor_kernel_info& info, const std::vector<ArgBuffer>& args,
                      const std::vector<std::vector<unsigned char>>& inputs_before) {
  expect_inputs_unchanged(info, args, inputs_before, "typed call");
  std::vector<std::vector<unsigned char>> typed_outputs;
  std::vector<void*> plain, packed;
  std::vector<std::vector<unsigned char>> packed_consts;
  for (size_t i = 0; i < args.size(); ++i) {
    plain.push_back(args[i].data);
    packed.push_back(args[i].data);
    if (info.args[i].is_output) typed_outputs.push_back(copy_bytes(args[i]));
    if (!info.args[i].is_const) continue;
    int arg = static_cast<int>(i);
    int64_t elements = info.packed_elements(arg);
    ASSERT_GT(elements, 0) << info.name << ": packed elements of " << info.args[i].name;
    packed_consts.emplace_back(static_cast<size_t>(elements) * ansor_dtype_size(info.args[i].dtype));
    ASSERT_EQ(info.pack(arg, args[i].data, packed_consts.back().data()), 0) << info.name << ": packing " << info.args[i].name;
    packed.back() = packed_consts.back().data();
  }
  expect_inputs_unchanged(info, args, inputs_before, "packing");
  ASSERT_NO_FATAL_FAILURE(expect_same_outputs(info, args, info.call, plain, typed_outputs, "table's call()"));
  expect_inputs_unchanged(info, args, inputs_before, "table's call()");
  ASSERT_NO_FATAL_FAILURE(expect_same_outputs(info, args, info.call_packed, packed, typed_outputs, "table's call_packed()"));
  expect_inputs_unchanged(info, args, inputs_before, "table's call_packed()");
  // Leave the typed call's results for the comparison with the reference.
  size_t output = 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (info.args[i].is_output) std::memcpy(args[i].data, typed_outputs[output++].data(), args[i].bytes);
}

double kernel_tolerance(const std::string& name) {
  static const ansor::Program program = ansor::load_program_file(ANSOR_TEST_KERNELS_DEF);
  const ansor::Kernel* kernel = program.find(name);
  if (!kernel) throw std::invalid_argument("kernel_tolerance: no kernel '" + name + "' in " ANSOR_TEST_KERNELS_DEF);
  return ansor::output_tolerance(kernel->dag);
}

void expect_close_values(ansor_dtype dtype, const std::vector<int64_t>& actual_shape, const std::vector<double>& actual,
                         const Reference& expected, double tolerance) {
  ASSERT_EQ(actual_shape, expected.shape());
  double largest = 0;
  for (size_t i = 0; i < actual.size(); ++i) largest = std::max(largest, std::fabs(expected[i]));
  constexpr int kReported = 8;
  int mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool valid = dtype != ANSOR_DTYPE_BOOL || a == 0.0 || a == 1.0;
    if (valid && !std::isnan(e) && ansor::within_output_tolerance(a, e, tolerance, largest)) continue;
    if (++mismatches <= kReported)
      ADD_FAILURE() << "element " << index_string(i, actual_shape) << ": got " << a << ", expected " << e << " (tolerance "
                    << tolerance << " of max(1, " << largest << "))";
  }
  EXPECT_EQ(mismatches, 0) << "of " << actual.size() << " elements";
}

Reference conv2d_nchw_reference(const Reference& x, const Reference& w, const ConvParams& p) {
  const int64_t batch = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t filters = w.shape()[0], group_channels = w.shape()[1], window_h = w.shape()[2], window_w = w.shape()[3];
  if (channels != group_channels * p.groups || filters % p.groups != 0) throw std::invalid_argument("bad groups");
  const int64_t out_h = (height + p.pad_top + p.pad_bottom - p.dilation_h * (window_h - 1) - 1) / p.stride_h + 1;
  const int64_t out_w = (width + p.pad_left + p.pad_right - p.dilation_w * (window_w - 1) - 1) / p.stride_w + 1;
  const int64_t filters_per_group = filters / p.groups;
  Reference y({batch, filters, out_h, out_w});
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t k = 0; k < filters; ++k)
      for (int64_t oy = 0; oy < out_h; ++oy)
        for (int64_t ox = 0; ox < out_w; ++ox) {
          double sum = 0;
          for (int64_t c = 0; c < group_channels; ++c)
            for (int64_t r = 0; r < window_h; ++r)
              for (int64_t s = 0; s < window_w; ++s) {
                int64_t iy = oy * p.stride_h - p.pad_top + r * p.dilation_h;
                int64_t ix = ox * p.stride_w - p.pad_left + s * p.dilation_w;
                if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
                sum += x(n, k / filters_per_group * group_channels + c, iy, ix) * w(k, c, r, s);
              }
          y(n, k, oy, ox) = sum;
        }
  return y;
}

}  // namespace kernel_tests
