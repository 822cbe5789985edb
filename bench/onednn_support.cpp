#include "onednn_support.h"

#include "bench_support.h"

namespace ansor::bench {

using dnnl::memory;

memory::desc plain_desc(const memory::dims& dims) {
  static const memory::format_tag tags[] = {memory::format_tag::a, memory::format_tag::ab, memory::format_tag::abc,
                                            memory::format_tag::abcd};
  return memory::desc(dims, memory::data_type::f32, tags[dims.size() - 1]);
}

memory wrap(OneDnn& d, const memory::desc& md, const float* data) { return memory(md, d.engine, const_cast<float*>(data)); }

double time_primitive(OneDnn& d, const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
  return median_seconds([&] {
    p.execute(d.stream, args);
    d.stream.wait();
  });
}

namespace {

dnnl::primitive_attr eltwise_epilogue(dnnl::algorithm algorithm) {
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, algorithm, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

}  // namespace

memory reordered_weights(OneDnn& d, const memory::desc& plain, const memory::desc& wanted, const float* data) {
  memory weights_plain = wrap(d, plain, data), weights(wanted, d.engine);
  dnnl::reorder(weights_plain, weights).execute(d.stream, weights_plain, weights);
  d.stream.wait();
  return weights;
}

dnnl::primitive_attr gelu_epilogue() { return eltwise_epilogue(dnnl::algorithm::eltwise_gelu_erf); }
dnnl::primitive_attr relu_epilogue() { return eltwise_epilogue(dnnl::algorithm::eltwise_relu); }

OneDnnTimer onednn_matmul(OneDnn& d, int64_t m, int64_t k, int64_t n) {
  return [&d, m, k, n](const std::vector<const float*>& in, float* out) {
    using dnnl::matmul;
    memory::desc src = plain_desc({m, k}), dst = plain_desc({m, n});
    memory::desc weights_any({k, n}, memory::data_type::f32, memory::format_tag::any);
    matmul::primitive_desc pd(matmul::desc(src, weights_any, dst), d.engine);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, src, in[0])},
                                            {DNNL_ARG_WEIGHTS, reordered_weights(d, plain_desc({k, n}), pd.weights_desc(), in[1])},
                                            {DNNL_ARG_DST, wrap(d, dst, out)}};
    return time_primitive(d, matmul(pd), args);
  };
}

OneDnnTimer onednn_dense(OneDnn& d, int64_t m, int64_t k, int64_t n, bool bias_gelu) {
  return [&d, m, k, n, bias_gelu](const std::vector<const float*>& in, float* out) {
    using dnnl::inner_product_forward;
    memory::desc src = plain_desc({m, k}), dst = plain_desc({m, n}), bias = plain_desc({n});
    memory::desc weights_any({n, k}, memory::data_type::f32, memory::format_tag::any);
    auto desc = bias_gelu ? inner_product_forward::desc(dnnl::prop_kind::forward_inference, src, weights_any, bias, dst)
                          : inner_product_forward::desc(dnnl::prop_kind::forward_inference, src, weights_any, dst);
    inner_product_forward::primitive_desc pd(desc, bias_gelu ? gelu_epilogue() : dnnl::primitive_attr(), d.engine);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, src, in[0])},
                                            {DNNL_ARG_WEIGHTS, reordered_weights(d, plain_desc({n, k}), pd.weights_desc(), in[1])},
                                            {DNNL_ARG_DST, wrap(d, dst, out)}};
    if (bias_gelu) args.emplace(DNNL_ARG_BIAS, wrap(d, bias, in[2]));
    return time_primitive(d, inner_product_forward(pd), args);
  };
}

OneDnnTimer onednn_conv2d_nhwc_bias_relu(OneDnn& d, int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t r, int64_t pad) {
  return [&d, n, h, w, c, k, r, pad](const std::vector<const float*>& in, float* out) {
    using dnnl::convolution_forward;
    const int64_t out_h = h + 2 * pad - r + 1, out_w = w + 2 * pad - r + 1;
    // oneDNN names dimensions N, C, H, W whatever the layout; the tags say how they are stored.
    memory::desc src({n, c, h, w}, memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc dst({n, k, out_h, out_w}, memory::data_type::f32, memory::format_tag::nhwc);
    memory::desc weights_plain({k, c, r, r}, memory::data_type::f32, memory::format_tag::hwio);
    memory::desc weights_any({k, c, r, r}, memory::data_type::f32, memory::format_tag::any);
    convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights_any,
                                   plain_desc({k}), dst, {1, 1}, {pad, pad}, {pad, pad});
    convolution_forward::primitive_desc pd(desc, relu_epilogue(), d.engine);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, src, in[0])},
                                            {DNNL_ARG_WEIGHTS, reordered_weights(d, weights_plain, pd.weights_desc(), in[1])},
                                            {DNNL_ARG_BIAS, wrap(d, plain_desc({k}), in[2])},
                                            {DNNL_ARG_DST, wrap(d, dst, out)}};
    return time_primitive(d, convolution_forward(pd), args);
  };
}

}  // namespace ansor::bench
