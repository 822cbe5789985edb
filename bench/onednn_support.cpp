#include "onednn_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace ansor::bench {

using dnnl::memory;
using Role = OneDnnArgument::Role;

OneDnn& onednn() {
  static OneDnn d;
  return d;
}

memory::desc plain_desc(const memory::dims& dims, memory::data_type type) {
  static const memory::format_tag tags[] = {memory::format_tag::a, memory::format_tag::ab, memory::format_tag::abc, memory::format_tag::abcd,
                                            memory::format_tag::abcde};
  return memory::desc(dims, type, tags[dims.size() - 1]);
}

memory::desc any_desc(const memory::desc& md) { return memory::desc(md.dims(), md.data_type(), memory::format_tag::any); }

std::string layout_name(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "any";
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  std::vector<int> order(static_cast<size_t>(d.ndims));
  std::iota(order.begin(), order.end(), 0);
  // Outer dimensions from the largest stride to the smallest; equal strides (extent 1) in order.
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (int dim : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k) blocked = blocked || b.inner_idxs[k] == dim;
    name += static_cast<char>((blocked ? 'A' : 'a') + dim);
  }
  for (int k = 0; k < b.inner_nblks; ++k) name += fmt::format("{}{}", b.inner_blks[k], static_cast<char>('a' + b.inner_idxs[k]));
  return name;
}

namespace {

memory wrap(const memory::desc& md, const void* data) { return memory(md, onednn().engine, const_cast<void*>(data)); }

const char* argument_name(int id) {
  switch (id) {
    case DNNL_ARG_SRC: return "src";
    case DNNL_ARG_WEIGHTS: return "weights";
    case DNNL_ARG_DST: return "dst";
    case DNNL_ARG_BIAS: return "bias";
    default: return "arg";
  }
}

dnnl::primitive_attr eltwise_epilogue(dnnl::algorithm algorithm) {
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, algorithm, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

// Everything a prepared primitive's calls use.
struct PreparedPrimitive {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::vector<std::pair<dnnl::reorder, std::pair<memory, memory>>> reorders_in, reorders_out;  // per call, from and to our buffers
  std::shared_ptr<void> resources;

  void run() {
    primitive.execute(onednn().stream, args);
    onednn().stream.wait();
  }
  void reorder(std::vector<std::pair<dnnl::reorder, std::pair<memory, memory>>>& list) {
    for (auto& [r, from_to] : list) r.execute(onednn().stream, from_to.first, from_to.second);
  }
};

}  // namespace

LibraryCall onednn_call(const dnnl::primitive_desc_base& pd, const dnnl::primitive& primitive, PrimitiveKind kind,
                        const std::vector<OneDnnArgument>& arguments, std::shared_ptr<void> resources) {
  auto prepared = std::make_shared<PreparedPrimitive>();
  prepared->primitive = primitive;
  prepared->resources = std::move(resources);
  std::vector<std::string> layouts;
  for (const OneDnnArgument& a : arguments) {
    const memory::desc chosen = pd.query_md(dnnl::query::exec_arg_md, a.id);
    if (a.role == Role::Scratch) {
      prepared->args.emplace(a.id, memory(chosen, onednn().engine));
      continue;
    }
    memory ours = wrap(a.plain, a.data);
    if (chosen == a.plain) {
      prepared->args.emplace(a.id, ours);
      continue;
    }
    layouts.push_back(fmt::format("{} {}", argument_name(a.id), layout_name(chosen)));
    memory theirs(chosen, onednn().engine);
    prepared->args.emplace(a.id, theirs);
    if (a.role == Role::Output) {
      prepared->reorders_out.push_back({dnnl::reorder(theirs, ours), {theirs, ours}});
      continue;
    }
    dnnl::reorder in(ours, theirs);
    in.execute(onednn().stream, ours, theirs);  // once, outside the timing
    if (a.role == Role::Input) prepared->reorders_in.push_back({in, {ours, theirs}});
  }
  onednn().stream.wait();
  LibraryCall call;
  call.library = "oneDNN";
  call.parts = {{kind, pd.impl_info_str()}};
  for (const std::string& l : layouts) call.layouts += (call.layouts.empty() ? "" : ", ") + l;
  call.run = [prepared] { prepared->run(); };
  if (!prepared->reorders_in.empty() || !prepared->reorders_out.empty()) {
    call.reorders = [prepared] {
      prepared->reorder(prepared->reorders_in);
      prepared->reorder(prepared->reorders_out);
      onednn().stream.wait();
    };
    call.run_plain_io = [prepared] {
      prepared->reorder(prepared->reorders_in);
      prepared->primitive.execute(onednn().stream, prepared->args);
      prepared->reorder(prepared->reorders_out);
      onednn().stream.wait();
    };
  }
  call.resources = prepared;
  return call;
}

dnnl::primitive_attr gelu_epilogue() { return eltwise_epilogue(dnnl::algorithm::eltwise_gelu_erf); }
dnnl::primitive_attr relu_epilogue() { return eltwise_epilogue(dnnl::algorithm::eltwise_relu); }
dnnl::primitive_attr sqrt_epilogue() { return eltwise_epilogue(dnnl::algorithm::eltwise_sqrt); }

LibraryPreparer onednn_convolution(const ConvolutionSpec& c) {
  return [c](const std::vector<const void*>& in, void* out) {
    const memory::desc bias = c.bias ? plain_desc({c.dst.dims()[1]}) : memory::desc();
    const dnnl::primitive_attr attr = c.relu ? relu_epilogue() : dnnl::primitive_attr();
    std::vector<OneDnnArgument> args = {{DNNL_ARG_SRC, c.src, in[0], Role::Input},
                                        {DNNL_ARG_WEIGHTS, c.weights, in[1], Role::Weights},
                                        {DNNL_ARG_DST, c.dst, out, Role::Output}};
    if (c.bias) args.push_back({DNNL_ARG_BIAS, bias, in[2], Role::Weights});
    const auto prop = dnnl::prop_kind::forward_inference;
    if (c.transposed) {
      using dnnl::deconvolution_forward;
      deconvolution_forward::primitive_desc pd(
          deconvolution_forward::desc(prop, dnnl::algorithm::deconvolution_direct, any_desc(c.src), any_desc(c.weights), bias,
                                      any_desc(c.dst), c.strides, c.dilates, c.pad, c.pad),
          attr, onednn().engine);
      return onednn_call(pd, deconvolution_forward(pd), PrimitiveKind::Deconvolution, args);
    }
    using dnnl::convolution_forward;
    convolution_forward::primitive_desc pd(convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, any_desc(c.src),
                                                                     any_desc(c.weights), bias, any_desc(c.dst), c.strides, c.dilates, c.pad,
                                                                     c.pad),
                                           attr, onednn().engine);
    return onednn_call(pd, convolution_forward(pd), PrimitiveKind::Convolution, args);
  };
}

LibraryPreparer onednn_conv_batch_norm_relu(ConvolutionSpec spec, double eps) {
  spec.bias = true;
  spec.relu = true;
  LibraryPreparer convolution = onednn_convolution(spec);
  return [spec, eps, convolution](const std::vector<const void*>& inputs, void* out) {
    std::vector<const float*> in;  // an f32 layer, whose values the folding reads
    for (const void* p : inputs) in.push_back(static_cast<const float*>(p));
    const memory::dims w = spec.weights.dims();
    const int64_t channels = w[0], per_channel = w[1] * w[2] * w[3];
    struct Folded {
      std::vector<float> weights, bias;
    };
    auto folded = std::make_shared<Folded>();
    folded->weights.assign(in[1], in[1] + channels * per_channel);
    folded->bias.resize(channels);
    for (int64_t o = 0; o < channels; ++o) {
      const double scale = in[4][o] / std::sqrt(in[3][o] + eps);
      folded->bias[o] = static_cast<float>(in[5][o] - in[2][o] * scale);
      for (int64_t i = 0; i < per_channel; ++i)
        folded->weights[i * channels + o] = static_cast<float>(folded->weights[i * channels + o] * scale);
    }
    LibraryCall call = convolution({in[0], folded->weights.data(), folded->bias.data()}, out);
    call.resources = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<Folded>>>(call.resources, folded);
    return call;
  };
}

LibraryPreparer onednn_matmul(int64_t batch, int64_t m, int64_t k, int64_t n, bool b_is_const, DataTypes types) {
  return [=](const std::vector<const void*>& in, void* out) {
    // A batch of one as plain matrices: oneDNN 2.6's matmul chooses a blocked layout for `any`
    // weights only without a batch dimension (with one, it keeps them row-major and is 5-10 %
    // slower on the Zen 5, in f32 and in int8).
    auto dims = [&](int64_t rows, int64_t columns) { return batch == 1 ? memory::dims{rows, columns} : memory::dims{batch, rows, columns}; };
    memory::desc a = plain_desc(dims(m, k), types.src), b = plain_desc(dims(k, n), types.weights), c = plain_desc(dims(m, n), types.dst);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(any_desc(a), any_desc(b), any_desc(c)), onednn().engine);
    return onednn_call(pd, dnnl::matmul(pd), PrimitiveKind::Matmul,
                       {{DNNL_ARG_SRC, a, in[0], Role::Input},
                        {DNNL_ARG_WEIGHTS, b, in[1], b_is_const ? Role::Weights : Role::Input},
                        {DNNL_ARG_DST, c, out, Role::Output}});
  };
}

LibraryPreparer onednn_dense(int64_t m, int64_t k, int64_t n, DenseEpilogue epilogue, DataTypes types) {
  return [=](const std::vector<const void*>& in, void* out) {
    using dnnl::inner_product_forward;
    memory::desc src = plain_desc({m, k}, types.src), weights = plain_desc({n, k}, types.weights), dst = plain_desc({m, n}, types.dst),
                 bias = plain_desc({n});
    const bool with_bias = epilogue != DenseEpilogue::None;
    const auto prop = dnnl::prop_kind::forward_inference;
    auto desc = with_bias ? inner_product_forward::desc(prop, any_desc(src), any_desc(weights), bias, any_desc(dst))
                          : inner_product_forward::desc(prop, any_desc(src), any_desc(weights), any_desc(dst));
    const dnnl::primitive_attr attr = epilogue == DenseEpilogue::BiasGelu   ? gelu_epilogue()
                                      : epilogue == DenseEpilogue::BiasRelu ? relu_epilogue()
                                                                            : dnnl::primitive_attr();
    inner_product_forward::primitive_desc pd(desc, attr, onednn().engine);
    std::vector<OneDnnArgument> args = {{DNNL_ARG_SRC, src, in[0], Role::Input},
                                        {DNNL_ARG_WEIGHTS, weights, in[1], Role::Weights},
                                        {DNNL_ARG_DST, dst, out, Role::Output}};
    if (with_bias) args.push_back({DNNL_ARG_BIAS, bias, in[2], Role::Weights});
    return onednn_call(pd, inner_product_forward(pd), PrimitiveKind::InnerProduct, args);
  };
}

LibraryPreparer onednn_softmax(const memory::dims& dims, int axis) {
  return [=](const std::vector<const void*>& in, void* out) {
    memory::desc md = plain_desc(dims);
    dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, axis}, onednn().engine);
    return onednn_call(pd, dnnl::softmax_forward(pd), PrimitiveKind::Softmax,
                       {{DNNL_ARG_SRC, md, in[0], Role::Input}, {DNNL_ARG_DST, md, out, Role::Output}});
  };
}

LibraryPreparer onednn_layer_norm(const memory::dims& dims, double eps) {
  return [=](const std::vector<const void*>& in, void* out) {
    memory::desc md = plain_desc(dims), param = plain_desc({dims.back()});
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, static_cast<float>(eps), flags},
                                                         onednn().engine);
    std::vector<OneDnnArgument> args = {{DNNL_ARG_SRC, md, in[0], Role::Input},
                                        {DNNL_ARG_SCALE, param, in[1], Role::Weights},
                                        {DNNL_ARG_SHIFT, param, in[2], Role::Weights},
                                        {DNNL_ARG_DST, md, out, Role::Output}};
    // Inference may still want somewhere to put the statistics it computes.
    if (pd.mean_desc().get_size() > 0) {
      args.push_back({DNNL_ARG_MEAN, pd.mean_desc(), nullptr, Role::Scratch});
      args.push_back({DNNL_ARG_VARIANCE, pd.variance_desc(), nullptr, Role::Scratch});
    }
    return onednn_call(pd, dnnl::layer_normalization_forward(pd), PrimitiveKind::LayerNorm, args);
  };
}

LibraryPreparer onednn_bias_gelu(int64_t m, int64_t n) {
  return [=](const std::vector<const void*>& in, void* out) {
    memory::desc md = plain_desc({m, n}), bias = plain_desc({1, n});
    dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, md, bias, any_desc(md)}, gelu_epilogue(), onednn().engine);
    return onednn_call(pd, dnnl::binary(pd), PrimitiveKind::Binary,
                       {{DNNL_ARG_SRC_0, md, in[0], Role::Input}, {DNNL_ARG_SRC_1, bias, in[1], Role::Weights},
                        {DNNL_ARG_DST, md, out, Role::Output}});
  };
}

namespace {

// The norm as oneDNN's matmul of each flattened matrix with itself, with a square-root post-op.
LibraryCall norm2_by_matmul(int64_t batch, int64_t elements, const void* x, void* out) {
  memory::desc row = plain_desc({batch, 1, elements}), column = plain_desc({batch, elements, 1}), norm = plain_desc({batch, 1, 1});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(any_desc(row), any_desc(column), any_desc(norm)), sqrt_epilogue(), onednn().engine);
  return onednn_call(pd, dnnl::matmul(pd), PrimitiveKind::Matmul,
                     {{DNNL_ARG_SRC, row, x, Role::Input}, {DNNL_ARG_WEIGHTS, column, x, Role::Input}, {DNNL_ARG_DST, norm, out, Role::Output}});
}

// The norm as oneDNN's eltwise square into a buffer of its own, then its sum reduction over each
// matrix with a square-root post-op.
LibraryCall norm2_by_square_and_sum(int64_t batch, int64_t elements, const void* x, void* out) {
  memory::desc flat = plain_desc({batch, elements}), norm = plain_desc({batch, 1});
  dnnl::eltwise_forward::primitive_desc square_pd({dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_square, flat, 0.0f, 0.0f},
                                                  onednn().engine);
  dnnl::reduction::primitive_desc sum_pd(dnnl::reduction::desc(dnnl::algorithm::reduction_sum, flat, norm, 0.0f, 0.0f), sqrt_epilogue(),
                                         onednn().engine);
  struct Prepared {
    dnnl::eltwise_forward square;
    dnnl::reduction sum;
    memory x, squares, norm;
  };
  auto p = std::make_shared<Prepared>(
      Prepared{dnnl::eltwise_forward(square_pd), dnnl::reduction(sum_pd), wrap(flat, x), memory(flat, onednn().engine), wrap(norm, out)});
  LibraryCall call;
  call.library = "oneDNN";
  call.parts = {{PrimitiveKind::Eltwise, square_pd.impl_info_str()}, {PrimitiveKind::Reduction, sum_pd.impl_info_str()}};
  call.run = [p] {
    p->square.execute(onednn().stream, {{DNNL_ARG_SRC, p->x}, {DNNL_ARG_DST, p->squares}});
    p->sum.execute(onednn().stream, {{DNNL_ARG_SRC, p->squares}, {DNNL_ARG_DST, p->norm}});
    onednn().stream.wait();
  };
  call.resources = p;
  return call;
}

}  // namespace

LibraryPreparer onednn_norm2(int64_t batch, int64_t elements) {
  return [=](const std::vector<const void*>& in, void* out) {
    // Of the two formulations, the one faster on this machine and shape, timed briefly here.
    LibraryCall by_matmul = norm2_by_matmul(batch, elements, in[0], out);
    LibraryCall by_sum = norm2_by_square_and_sum(batch, elements, in[0], out);
    const double matmul_seconds = median_seconds(by_matmul.row_major_call(), 0.05);
    const double sum_seconds = median_seconds(by_sum.row_major_call(), 0.05);
    return matmul_seconds <= sum_seconds ? by_matmul : by_sum;
  };
}

LibraryPreparer onednn_attention_scores(int64_t b, int64_t s, int64_t h, int64_t d) {
  return [=](const std::vector<const void*>& in, void* out) {
    memory::desc q({b, h, s, d}, memory::data_type::f32, memory::dims{s * h * d, d, h * d, 1});
    memory::desc kt({b, h, d, s}, memory::data_type::f32, memory::dims{s * h * d, d, 1, h * d});
    memory::desc scores = plain_desc({b, h, s, s});
    dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(q, kt, scores), onednn().engine);
    dnnl::softmax_forward::primitive_desc softmax_pd({dnnl::prop_kind::forward_inference, scores, 3}, onednn().engine);
    struct Prepared {
      dnnl::matmul matmul;
      dnnl::softmax_forward softmax;
      memory q, k, y;
    };
    auto p = std::make_shared<Prepared>(Prepared{dnnl::matmul(matmul_pd), dnnl::softmax_forward(softmax_pd), wrap(q, in[0]), wrap(kt, in[1]),
                                                 wrap(scores, out)});
    LibraryCall call;
    call.library = "oneDNN";
    call.parts = {{PrimitiveKind::Matmul, matmul_pd.impl_info_str()}, {PrimitiveKind::Softmax, softmax_pd.impl_info_str()}};
    call.run = [p] {
      p->matmul.execute(onednn().stream, {{DNNL_ARG_SRC, p->q}, {DNNL_ARG_WEIGHTS, p->k}, {DNNL_ARG_DST, p->y}});
      p->softmax.execute(onednn().stream, {{DNNL_ARG_SRC, p->y}, {DNNL_ARG_DST, p->y}});
      onednn().stream.wait();
    };
    call.resources = p;
    return call;
  };
}

}  // namespace ansor::bench
