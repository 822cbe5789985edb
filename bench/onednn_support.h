// oneDNN as the benchmarks' vendor reference: one engine and stream per run, plain row-major
// descriptors over our kernels' buffers, and the primitives the benchmarks compare against,
// each given our kernel's inputs in argument order and timed as a median of calls.
#pragma once

#include <dnnl.hpp>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "bench_support.h"

namespace ansor::bench {

// oneDNN's engine and stream, shared by every primitive of the run.
struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

// What oneDNN runs for one operator, timed as every library is.
using OneDnnTimer = LibraryTimer;

// A dense f32 descriptor in row-major order (format tags a, ab, abc, abcd).
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims);

// oneDNN takes inputs through non-const handles; it does not write them.
dnnl::memory wrap(OneDnn& d, const dnnl::memory::desc& md, const float* data);

// Const weights in their plain layout, reordered once into the layout a primitive wants (done
// outside the timing, as ours are packed once).
dnnl::memory reordered_weights(OneDnn& d, const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted, const float* data);

// Median seconds of one execution of p on args, waiting for the stream each time.
double time_primitive(OneDnn& d, const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args);

// Attributes whose post-op is the exact (erf) gelu, or relu.
dnnl::primitive_attr gelu_epilogue();
dnnl::primitive_attr relu_epilogue();

// A [M, K] · B [K, N] as oneDNN's matmul; B is const and reordered once, outside the timing, into
// the layout oneDNN picks, as ours are packed once.
OneDnnTimer onednn_matmul(OneDnn& d, int64_t m, int64_t k, int64_t n);

// dense(X, W) with W [N, K] is oneDNN's inner product, with bias b [N] and a gelu epilogue when
// bias_gelu. The weights are reordered into the layout oneDNN picks once, outside the timing,
// as ours are packed once.
OneDnnTimer onednn_dense(OneDnn& d, int64_t m, int64_t k, int64_t n, bool bias_gelu);

// relu(bias_add(conv2d_nhwc(X, W, stride 1, pad), b)) with X [N, H, W, C], W [R, S, C, K] and
// b [K], written NHWC: source and destination stay in our layout, the weights are reordered
// once outside the timing.
OneDnnTimer onednn_conv2d_nhwc_bias_relu(OneDnn& d, int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t r, int64_t pad);

}  // namespace ansor::bench
