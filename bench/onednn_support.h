// oneDNN as the benchmarks' vendor reference, called as its own engineers would: every primitive
// is created with `format_tag::any` for each argument that accepts it, so that oneDNN picks its
// native (usually blocked) layouts; inputs and weights are reordered into them once, outside the
// timing, as our const inputs are packed once; the reorders a caller with row-major tensors would
// add per call are timed on their own and inside a "plain I/O" call (protocol.h, bench/README.md).
// Primitives are created at the thread count set when they are prepared.
#pragma once

#include <dnnl.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "protocol.h"

namespace ansor::bench {

// oneDNN's engine and stream, shared by every primitive of the process.
struct OneDnn {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};
OneDnn& onednn();

// A dense descriptor in row-major order (format tags a, ab, abc, abcd, abcde).
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type type = dnnl::memory::data_type::f32);

// The same dimensions with format_tag::any: oneDNN picks the layout.
dnnl::memory::desc any_desc(const dnnl::memory::desc& md);

// oneDNN's name of a blocked layout ("aBcd16b" is nChw16c), as its verbose mode prints it.
std::string layout_name(const dnnl::memory::desc& md);

// One argument of a primitive over our buffers. Inputs are reordered into the primitive's layout
// once when prepared and again in each plain-I/O call; weights only once (as ours are packed
// once); the output is reordered back in each plain-I/O call. Scratch arguments (statistics an
// inference primitive writes anyway) get memory of the primitive's own and no buffer of ours.
struct OneDnnArgument {
  enum class Role { Input, Weights, Output, Scratch };
  int id;                     // DNNL_ARG_*
  dnnl::memory::desc plain;   // how our buffer holds it (its data type included)
  const void* data;
  Role role;
};

// A primitive prepared over our buffers: the layouts its descriptor chose are read back per
// argument (`any` where it was created so), memories and reorders made where they differ from
// ours. `resources` keeps what the arguments point into alive (folded weights, say).
LibraryCall onednn_call(const dnnl::primitive_desc_base& pd, const dnnl::primitive& primitive, PrimitiveKind kind,
                        const std::vector<OneDnnArgument>& arguments, std::shared_ptr<void> resources = nullptr);

// Attributes with one eltwise post-op: the exact (erf) gelu, relu, or a square root.
dnnl::primitive_attr gelu_epilogue();
dnnl::primitive_attr relu_epilogue();
dnnl::primitive_attr sqrt_epilogue();

// A forward convolution or deconvolution. The descriptors are ours (row-major in our layout,
// with oneDNN's logical dimension order: N C spatial, (G) O I spatial, and our data types: f32,
// or bf16 source and weights into an f32 destination); the primitive is created with `any` for
// source, weights and destination. Inputs in argument order: source, weights, and the bias [O]
// (f32) when `bias`.
struct ConvolutionSpec {
  dnnl::memory::desc src, weights, dst;
  dnnl::memory::dims strides, dilates, pad;  // dilates as oneDNN counts them (0: none)
  bool transposed = false, bias = false, relu = false;
};
LibraryPreparer onednn_convolution(const ConvolutionSpec& spec);

// relu(batch_norm(conv(X, W), mean, var, gamma, beta)) as a deployment runs it: the
// normalisation folded into the weights and a bias once (outside the timing), then a convolution
// with bias and relu. Inputs: X, W, mean, var, gamma, beta; `spec.weights` must be O I H W in a
// layout whose output channel is the innermost dimension (HWIO), as our NHWC kernels hold it.
LibraryPreparer onednn_conv_batch_norm_relu(ConvolutionSpec spec, double eps);

// The data types of a primitive's source, weights and destination: f32 throughout, or a low
// precision one (bf16 source and weights into f32 or bf16; u8 source and s8 weights into s32).
struct DataTypes {
  dnnl::memory::data_type src = dnnl::memory::data_type::f32, weights = dnnl::memory::data_type::f32,
                          dst = dnnl::memory::data_type::f32;
};

// C [b, m, n] = A [b, m, k] · B [b, k, n], `any` throughout; B is const (reordered once, as
// weights) when b_is_const, else an input like A. A is the source, B the weights. A batch of one
// is given to oneDNN as 2-D matrices, its own form of a single product.
LibraryPreparer onednn_matmul(int64_t batch, int64_t m, int64_t k, int64_t n, bool b_is_const, DataTypes types = {});

// What follows a dense layer's product in the same primitive: nothing, or a bias [n] (f32, the
// third input) and an eltwise post-op.
enum class DenseEpilogue { None, BiasGelu, BiasRelu };

// dense(X [m, k], W [n, k]) as oneDNN's inner product, `any` throughout, with its epilogue.
LibraryPreparer onednn_dense(int64_t m, int64_t k, int64_t n, DenseEpilogue epilogue, DataTypes types = {});

// softmax over `axis` of a row-major tensor (oneDNN takes no `any` source for it).
LibraryPreparer onednn_softmax(const dnnl::memory::dims& dims, int axis);

// Layer normalisation over the last axis, with scale and shift (inputs X, gamma, beta).
LibraryPreparer onednn_layer_norm(const dnnl::memory::dims& dims, double eps);

// gelu(X [m, n] + b [n]): the binary add with the gelu post-op.
LibraryPreparer onednn_bias_gelu(int64_t m, int64_t n);

// The 2-norm of each of `batch` matrices of `elements` floats. oneDNN's own reduction of that norm
// is a reference implementation; of its two native formulations (a [1, K] · [K, 1] matmul of each
// flattened matrix with itself and a square-root post-op; an eltwise square, then a sum
// reduction with a square-root post-op), the faster on this machine and shape is used.
LibraryPreparer onednn_norm2(int64_t batch, int64_t elements);

// softmax(Q K^T) over the last axis, Q and K [b, s, h, d] read in place through strides (the
// transposes of the subgraph), the scores [b, h, s, s] row-major: a matmul, then softmax in place.
LibraryPreparer onednn_attention_scores(int64_t b, int64_t s, int64_t h, int64_t d);

}  // namespace ansor::bench
