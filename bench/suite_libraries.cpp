#include "suite_libraries.h"

#include <fmt/format.h>

#include <cmath>

#if ANSOR_BENCH_ONEDNN
#include "onednn_support.h"
#endif
#if ANSOR_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace ansor::bench {

namespace {

[[maybe_unused]] std::vector<int64_t> shape_of(const ansor_tensor_info& t) { return std::vector<int64_t>(t.shape, t.shape + t.rank); }

#if ANSOR_BENCH_ONEDNN
using dnnl::memory;
using Tag = memory::format_tag;

OneDnn& onednn() {
  static OneDnn d;
  return d;
}

memory::desc tagged(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// A forward convolution (or deconvolution) over our layouts: the source and destination stay in
// the kernel's layout, the weights are reordered once from the kernel's layout into oneDNN's.
struct Convolution {
  memory::desc src, weights, dst;  // logical dims in oneDNN's order (N C spatial; (G) O I spatial)
  memory::dims strides, dilates, pad;
  bool transposed = false, relu = false;
};

LibraryTiming time_convolution(const Convolution& c, const float* src, const float* weights, const float* bias, float* out) {
  OneDnn& d = onednn();
  memory::desc weights_any(c.weights.dims(), memory::data_type::f32, Tag::any);
  memory::desc bias_desc = bias ? plain_desc({c.dst.dims()[1]}) : memory::desc();
  dnnl::primitive_attr attr = c.relu ? relu_epilogue() : dnnl::primitive_attr();
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, c.src, src)}, {DNNL_ARG_DST, wrap(d, c.dst, out)}};
  if (bias) args.emplace(DNNL_ARG_BIAS, wrap(d, bias_desc, bias));
  if (c.transposed) {
    using dnnl::deconvolution_forward;
    deconvolution_forward::primitive_desc pd(
        deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, c.src, weights_any,
                                    bias_desc, c.dst, c.strides, c.dilates, c.pad, c.pad),
        attr, d.engine);
    args.emplace(DNNL_ARG_WEIGHTS, reordered_weights(d, c.weights, pd.weights_desc(), weights));
    return {time_primitive(d, deconvolution_forward(pd), args), pd.impl_info_str()};
  }
  using dnnl::convolution_forward;
  convolution_forward::primitive_desc pd(
      convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, c.src, weights_any, bias_desc,
                                c.dst, c.strides, c.dilates, c.pad, c.pad),
      attr, d.engine);
  args.emplace(DNNL_ARG_WEIGHTS, reordered_weights(d, c.weights, pd.weights_desc(), weights));
  return {time_primitive(d, convolution_forward(pd), args), pd.impl_info_str()};
}

SuiteLibraryTimer plain_convolution(const Convolution& c) {
  return [c](const std::vector<const float*>& in, float* out) { return time_convolution(c, in[0], in[1], nullptr, out); };
}

// An NHWC convolution with R x S x C x K weights.
Convolution nhwc_convolution(const ansor_kernel_info& k, int64_t stride, int64_t pad, int64_t dilation) {
  auto x = shape_of(k.args[0]), w = shape_of(k.args[1]), y = shape_of(k.args[k.num_args - 1]);
  return {tagged({x[0], x[3], x[1], x[2]}, Tag::nhwc), tagged({w[3], w[2], w[0], w[1]}, Tag::hwio),
          tagged({y[0], y[3], y[1], y[2]}, Tag::nhwc), {stride, stride}, {dilation - 1, dilation - 1}, {pad, pad}};
}

// relu(batch_norm(conv2d_nhwc(X, W), mean, var, gamma, beta)) as a deployment runs it in oneDNN:
// the normalisation folded into the weights and a bias once, then a convolution with a bias and a
// relu post-op.
SuiteLibraryTimer conv_batch_norm_relu(const ansor_kernel_info& k) {
  Convolution c = nhwc_convolution(k, 1, 1, 1);
  c.relu = true;
  return [c](const std::vector<const float*>& in, float* out) {
    constexpr double kEps = 1e-5;  // batch_norm's default, as bench/suite.def uses it
    const memory::dims w = c.weights.dims();
    const int64_t channels = w[0], per_channel = w[1] * w[2] * w[3];
    std::vector<float> weights(in[1], in[1] + channels * per_channel), bias(channels);
    for (int64_t o = 0; o < channels; ++o) {
      double scale = in[4][o] / std::sqrt(in[3][o] + kEps);
      bias[o] = static_cast<float>(in[5][o] - in[2][o] * scale);
      for (int64_t i = 0; i < per_channel; ++i) weights[i * channels + o] = static_cast<float>(weights[i * channels + o] * scale);
    }
    return time_convolution(c, in[0], weights.data(), bias.data(), out);
  };
}

std::vector<LibraryRun> onednn_runs(const std::string& op, const ansor_kernel_info& k) {
  OneDnn& d = onednn();
  auto x = shape_of(k.args[0]), w = shape_of(k.args[1]), y = shape_of(k.args[k.num_args - 1]);
  auto one = [](SuiteLibraryTimer t) { return std::vector<LibraryRun>{{"oneDNN", std::move(t)}}; };
  if (op == "c1d")
    return one(plain_convolution({tagged({x[0], x[1], x[2]}, Tag::ncw), tagged({w[0], w[1], w[2]}, Tag::oiw),
                                  tagged({y[0], y[1], y[2]}, Tag::ncw), {2}, {0}, {1}}));
  if (op == "c2d") return one(plain_convolution(nhwc_convolution(k, 2, 3, 1)));
  if (op == "dil") return one(plain_convolution(nhwc_convolution(k, 2, 3, 2)));
  if (op == "c3d")
    return one(plain_convolution({tagged({x[0], x[1], x[2], x[3], x[4]}, Tag::ncdhw), tagged({w[0], w[1], w[2], w[3], w[4]}, Tag::oidhw),
                                  tagged({y[0], y[1], y[2], y[3], y[4]}, Tag::ncdhw), {1, 1, 1}, {0, 0, 0}, {1, 1, 1}}));
  if (op == "grp") {
    // W[r, s, c, k] with k = group * (K / G) + o, as oneDNN's [G, O, I, R, S] by strides.
    const int64_t groups = 4, in_per_group = w[2], out_channels = w[3], out_per_group = out_channels / groups;
    memory::desc weights({groups, out_per_group, in_per_group, w[0], w[1]}, memory::data_type::f32,
                         memory::dims{out_per_group, 1, out_channels, w[1] * in_per_group * out_channels, in_per_group * out_channels});
    return one(plain_convolution({tagged({x[0], x[3], x[1], x[2]}, Tag::nhwc), weights, tagged({y[0], y[3], y[1], y[2]}, Tag::nhwc),
                                  {1, 1}, {0, 0}, {1, 1}}));
  }
  if (op == "dep")
    return one(plain_convolution({tagged({x[0], x[1], x[2], x[3]}, Tag::nchw), tagged({w[0], 1, 1, w[2], w[3]}, Tag::goihw),
                                  tagged({y[0], y[1], y[2], y[3]}, Tag::nchw), {1, 1}, {0, 0}, {1, 1}}));
  if (op == "t2d") {
    Convolution c{tagged({x[0], x[1], x[2], x[3]}, Tag::nchw), tagged({w[1], w[0], w[2], w[3]}, Tag::iohw),
                  tagged({y[0], y[1], y[2], y[3]}, Tag::nchw), {2, 2}, {0, 0}, {1, 1}};
    c.transposed = true;
    return one(plain_convolution(c));
  }
  if (op == "conv_layer") return one(conv_batch_norm_relu(k));
  if (op == "gmm")
    return one([&d, x, w](const std::vector<const float*>& in, float* out) {
      memory::desc a = plain_desc({x[0], x[1], x[2]}), b = plain_desc({w[0], w[1], w[2]}), c = plain_desc({x[0], x[1], w[2]});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), d.engine);
      return LibraryTiming{time_primitive(d, dnnl::matmul(pd), {{DNNL_ARG_SRC, wrap(d, a, in[0])}, {DNNL_ARG_WEIGHTS, wrap(d, b, in[1])},
                                                                {DNNL_ARG_DST, wrap(d, c, out)}}),
                           pd.impl_info_str()};
    });
  if (op == "softmax")
    return one([&d, x](const std::vector<const float*>& in, float* out) {
      memory::desc md = plain_desc({x[0], x[1], x[2]});
      dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 2}, d.engine);
      return LibraryTiming{
          time_primitive(d, dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, wrap(d, md, in[0])}, {DNNL_ARG_DST, wrap(d, md, out)}}),
          pd.impl_info_str()};
    });
  if (op == "layer_norm")
    return one([&d, x](const std::vector<const float*>& in, float* out) {
      memory::desc md = plain_desc({x[0], x[1], x[2]}), param = plain_desc({x[2]});
      auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
      dnnl::layer_normalization_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 1e-5f, flags}, d.engine);
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, md, in[0])}, {DNNL_ARG_SCALE, wrap(d, param, in[1])},
                                              {DNNL_ARG_SHIFT, wrap(d, param, in[2])}, {DNNL_ARG_DST, wrap(d, md, out)}};
      if (pd.mean_desc().get_size() > 0) {
        args.emplace(DNNL_ARG_MEAN, memory(pd.mean_desc(), d.engine));
        args.emplace(DNNL_ARG_VARIANCE, memory(pd.variance_desc(), d.engine));
      }
      return LibraryTiming{time_primitive(d, dnnl::layer_normalization_forward(pd), args), pd.impl_info_str()};
    });
  if (op == "nrm")
    return one([&d, x](const std::vector<const float*>& in, float* out) {
      memory::desc src = plain_desc({x[0], x[1], x[2]}), dst = plain_desc({x[0], 1, 1});
      dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(dnnl::algorithm::reduction_norm_lp_sum, src, dst, 2.0f, 0.0f), d.engine);
      return LibraryTiming{time_primitive(d, dnnl::reduction(pd), {{DNNL_ARG_SRC, wrap(d, src, in[0])}, {DNNL_ARG_DST, wrap(d, dst, out)}}),
                           pd.impl_info_str()};
    });
  if (op == "tbs")
    // Q and K [b, s, h, d] read in place through strides as [b, h, s, d] and [b, h, d, s]; the
    // scores [b, h, s, s] (= our [b*h, s, s]) then go through softmax in place.
    return one([&d, x](const std::vector<const float*>& in, float* out) {
      const int64_t b = x[0], s = x[1], h = x[2], e = x[3];
      memory::desc q({b, h, s, e}, memory::data_type::f32, memory::dims{s * h * e, e, h * e, 1});
      memory::desc kt({b, h, e, s}, memory::data_type::f32, memory::dims{s * h * e, e, 1, h * e});
      memory::desc scores = plain_desc({b, h, s, s});
      dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(q, kt, scores), d.engine);
      dnnl::softmax_forward::primitive_desc softmax_pd({dnnl::prop_kind::forward_inference, scores, 3}, d.engine);
      dnnl::matmul matmul(matmul_pd);
      dnnl::softmax_forward softmax(softmax_pd);
      memory q_mem = wrap(d, q, in[0]), k_mem = wrap(d, kt, in[1]), y = wrap(d, scores, out);
      double seconds = median_seconds([&] {
        matmul.execute(d.stream, {{DNNL_ARG_SRC, q_mem}, {DNNL_ARG_WEIGHTS, k_mem}, {DNNL_ARG_DST, y}});
        softmax.execute(d.stream, {{DNNL_ARG_SRC, y}, {DNNL_ARG_DST, y}});
        d.stream.wait();
      });
      return LibraryTiming{seconds, fmt::format("{} + {}", matmul_pd.impl_info_str(), softmax_pd.impl_info_str())};
    });
  return {};
}
#endif

#if ANSOR_BENCH_OPENBLAS
std::vector<LibraryRun> openblas_runs(const std::string& op, const ansor_kernel_info& k) {
  if (op != "gmm") return {};
  auto a = shape_of(k.args[0]), b = shape_of(k.args[1]);
  const int batch = static_cast<int>(a[0]), m = static_cast<int>(a[1]), kk = static_cast<int>(a[2]), n = static_cast<int>(b[2]);
  return {{"OpenBLAS", [batch, m, kk, n](const std::vector<const float*>& in, float* out) {
             openblas_set_num_threads(ansor_get_num_threads());
             double seconds = median_seconds([&] {
               for (int i = 0; i < batch; ++i)
                 cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1, in[0] + int64_t{i} * m * kk, kk,
                             in[1] + int64_t{i} * kk * n, n, 0, out + int64_t{i} * m * n, n);
             });
             return LibraryTiming{seconds, fmt::format("cblas_sgemm x {}", batch)};
           }}};
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

std::vector<LibraryRun> suite_library_runs([[maybe_unused]] const std::string& op, [[maybe_unused]] const ansor_kernel_info& kernel) {
  std::vector<LibraryRun> runs;
#if ANSOR_BENCH_ONEDNN
  for (LibraryRun& r : onednn_runs(op, kernel)) runs.push_back(std::move(r));
#endif
#if ANSOR_BENCH_OPENBLAS
  for (LibraryRun& r : openblas_runs(op, kernel)) runs.push_back(std::move(r));
#endif
  return runs;
}

}  // namespace ansor::bench
