#include "suite_libraries.h"

#include <fmt/format.h>

#include <stdexcept>

#if ANSOR_BENCH_ONEDNN
#include "onednn_support.h"
#endif
#if ANSOR_BENCH_OPENBLAS
#include <cblas.h>

#include "openblas_support.h"
#endif

namespace ansor::bench {

namespace {

[[maybe_unused]] std::vector<int64_t> shape_of(const ansor_tensor_info& t) { return std::vector<int64_t>(t.shape, t.shape + t.rank); }

[[maybe_unused]] int64_t product(const std::vector<int64_t>& dims, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < dims.size(); ++i) n *= dims[i];
  return n;
}

#if ANSOR_BENCH_ONEDNN
using dnnl::memory;
using Tag = memory::format_tag;

memory::desc tagged(const memory::dims& dims, Tag tag, memory::data_type type = memory::data_type::f32) {
  return memory::desc(dims, type, tag);
}

// oneDNN's data type of a kernel argument's dtype.
memory::data_type data_type(const ansor_tensor_info& t) {
  switch (t.dtype) {
    case ANSOR_DTYPE_F32: return memory::data_type::f32;
    case ANSOR_DTYPE_BF16: return memory::data_type::bf16;
    case ANSOR_DTYPE_F16: return memory::data_type::f16;
    case ANSOR_DTYPE_I8: return memory::data_type::s8;
    case ANSOR_DTYPE_U8: return memory::data_type::u8;
    case ANSOR_DTYPE_I32: return memory::data_type::s32;
    default: throw std::invalid_argument(fmt::format("argument {} has a dtype oneDNN's primitives do not take", t.name));
  }
}

// The data types of a kernel's first input (the source), its second (the weights) and its output.
DataTypes data_types(const ansor_kernel_info& k) { return {data_type(k.args[0]), data_type(k.args[1]), data_type(k.args[k.num_args - 1])}; }

// An NHWC convolution with R x S x C x K weights, in the kernel's data types.
ConvolutionSpec nhwc_convolution(const ansor_kernel_info& k, int64_t stride, int64_t pad, int64_t dilation) {
  auto x = shape_of(k.args[0]), w = shape_of(k.args[1]), y = shape_of(k.args[k.num_args - 1]);
  const DataTypes types = data_types(k);
  return {tagged({x[0], x[3], x[1], x[2]}, Tag::nhwc, types.src), tagged({w[3], w[2], w[0], w[1]}, Tag::hwio, types.weights),
          tagged({y[0], y[3], y[1], y[2]}, Tag::nhwc, types.dst), {stride, stride}, {dilation - 1, dilation - 1}, {pad, pad}};
}

std::vector<NamedPreparer> onednn_preparers(const std::string& op, const ansor_kernel_info& k) {
  auto x = shape_of(k.args[0]), w = shape_of(k.args[1]), y = shape_of(k.args[k.num_args - 1]);
  auto one = [](LibraryPreparer p) { return std::vector<NamedPreparer>{{"oneDNN", std::move(p)}}; };
  if (op == "c1d")
    return one(onednn_convolution({tagged({x[0], x[1], x[2]}, Tag::ncw), tagged({w[0], w[1], w[2]}, Tag::oiw),
                                   tagged({y[0], y[1], y[2]}, Tag::ncw), {2}, {0}, {1}}));
  if (op == "c2d") return one(onednn_convolution(nhwc_convolution(k, 2, 3, 1)));
  if (op == "dil") return one(onednn_convolution(nhwc_convolution(k, 2, 3, 2)));
  if (op == "c3d")
    return one(onednn_convolution({tagged({x[0], x[1], x[2], x[3], x[4]}, Tag::ncdhw), tagged({w[0], w[1], w[2], w[3], w[4]}, Tag::oidhw),
                                   tagged({y[0], y[1], y[2], y[3], y[4]}, Tag::ncdhw), {1, 1, 1}, {0, 0, 0}, {1, 1, 1}}));
  if (op == "grp") {
    // W[r, s, c, k] with k = group * (K / G) + o, as oneDNN's [G, O, I, R, S] by strides.
    const int64_t groups = 4, in_per_group = w[2], out_channels = w[3], out_per_group = out_channels / groups;
    memory::desc weights({groups, out_per_group, in_per_group, w[0], w[1]}, memory::data_type::f32,
                         memory::dims{out_per_group, 1, out_channels, w[1] * in_per_group * out_channels, in_per_group * out_channels});
    return one(onednn_convolution({tagged({x[0], x[3], x[1], x[2]}, Tag::nhwc), weights, tagged({y[0], y[3], y[1], y[2]}, Tag::nhwc),
                                   {1, 1}, {0, 0}, {1, 1}}));
  }
  if (op == "dep")
    return one(onednn_convolution({tagged({x[0], x[1], x[2], x[3]}, Tag::nchw), tagged({w[0], 1, 1, w[2], w[3]}, Tag::goihw),
                                   tagged({y[0], y[1], y[2], y[3]}, Tag::nchw), {1, 1}, {0, 0}, {1, 1}}));
  if (op == "t2d") {
    ConvolutionSpec c{tagged({x[0], x[1], x[2], x[3]}, Tag::nchw), tagged({w[1], w[0], w[2], w[3]}, Tag::iohw),
                      tagged({y[0], y[1], y[2], y[3]}, Tag::nchw), {2, 2}, {0, 0}, {1, 1}};
    c.transposed = true;
    return one(onednn_convolution(c));
  }
  // bench/shapes.def's operators.
  if (op == "conv3x3" || op == "conv1x1") return one(onednn_convolution(nhwc_convolution(k, 1, op == "conv3x3" ? 1 : 0, 1)));
  if (op == "conv3x3valid") return one(onednn_convolution(nhwc_convolution(k, 1, 0, 1)));
  if (op == "dense") return one(onednn_dense(x[0], x[1], w[0], DenseEpilogue::None));
  if (op == "densebiasgelu") return one(onednn_dense(x[0], x[1], w[0], DenseEpilogue::BiasGelu));
  // bench/lowp.def's operators, in the kernels' data types: bf16 source and weights into f32 (or
  // bf16 after bias and relu), u8 times s8 into s32.
  if (op == "densebf16") return one(onednn_dense(x[0], x[1], w[0], DenseEpilogue::None, data_types(k)));
  if (op == "densebf16biasrelu") return one(onednn_dense(x[0], x[1], w[0], DenseEpilogue::BiasRelu, data_types(k)));
  if (op == "matmulu8s8") return one(onednn_matmul(1, x[0], x[1], w[1], true, data_types(k)));
  if (op == "conv3x3bf16") return one(onednn_convolution(nhwc_convolution(k, 1, 1, 1)));
  // Batched products of two activations (attention's probabilities times its values): the second
  // operand is an input, laid out by the library as it chooses outside the timing, as the first.
  if (op == "bmmbf16" || op == "bmmu8s8") return one(onednn_matmul(x[0], x[1], x[2], w[2], false, data_types(k)));
  if (op == "conv_layer") return one(onednn_conv_batch_norm_relu(nhwc_convolution(k, 1, 1, 1), 1e-5));  // batch_norm's default eps
  if (op == "gmm") return one(onednn_matmul(x[0], x[1], x[2], w[2], false));
  if (op == "softmax") return one(onednn_softmax(x, static_cast<int>(x.size()) - 1));
  if (op == "layer_norm") return one(onednn_layer_norm(x, 1e-5));
  if (op == "nrm") return one(onednn_norm2(x[0], product(x, 1)));
  if (op == "tbs") return one(onednn_attention_scores(x[0], x[1], x[2], x[3]));
  return {};
}
#endif

#if ANSOR_BENCH_OPENBLAS
std::vector<NamedPreparer> openblas_preparers(const std::string& op, const ansor_kernel_info& k) {
  auto a = shape_of(k.args[0]);
  if (op == "gmm") return {{"OpenBLAS", openblas_gemm(a[0], a[1], a[2], shape_of(k.args[1])[2])}};
  if (op == "nrm") return {{"OpenBLAS", openblas_norm2(a[0], product(a, 1))}};
  if (op == "dense") return {{"OpenBLAS", openblas_dense(a[0], a[1], shape_of(k.args[1])[0])}};
  return {};
}
#endif

}  // namespace

std::vector<std::string> libraries_found() {
  std::vector<std::string> found;
#if ANSOR_BENCH_ONEDNN
  found.push_back(fmt::format("oneDNN {}.{}.{}", dnnl::version()->major, dnnl::version()->minor, dnnl::version()->patch));
#endif
#if ANSOR_BENCH_OPENBLAS
  found.push_back(openblas_get_config());  // "OpenBLAS 0.3.21 ..."
#endif
  return found;
}

std::vector<std::string> libraries_missing() {
  std::vector<std::string> missing;
#if !ANSOR_BENCH_ONEDNN
  missing.push_back("oneDNN (not found at configure time: its columns are empty)");
#endif
#if !ANSOR_BENCH_OPENBLAS
  missing.push_back("OpenBLAS (not found at configure time: its columns are empty)");
#endif
  return missing;
}

std::vector<NamedPreparer> suite_libraries([[maybe_unused]] const std::string& op, [[maybe_unused]] const ansor_kernel_info& kernel) {
  std::vector<NamedPreparer> libraries;
#if ANSOR_BENCH_ONEDNN
  for (NamedPreparer& p : onednn_preparers(op, kernel)) libraries.push_back(std::move(p));
#endif
#if ANSOR_BENCH_OPENBLAS
  for (NamedPreparer& p : openblas_preparers(op, kernel)) libraries.push_back(std::move(p));
#endif
  return libraries;
}

}  // namespace ansor::bench
