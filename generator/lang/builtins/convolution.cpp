// Convolutions: conv1d_ncw, conv2d_nchw, conv2d_nhwc, depthwise_conv2d_nchw,
// conv2d_transpose_nchw, conv3d_ncdhw. Padding is a separate operation (a select), which the
// search may inline or compute inside the convolution's tiles.
#include <fmt/format.h>

#include <algorithm>

#include "lang/builtins/common.h"

namespace ansor {

namespace {

struct WindowParams {
  std::vector<int64_t> stride, dilation, pad_before, pad_after;
  int64_t groups = 1;
};

WindowParams read_window_params(const BuiltinCall& call, int spatial, bool dilation, bool groups) {
  WindowParams p;
  p.stride = call.per_dim_arg("stride", spatial, 1);
  p.dilation = dilation ? call.per_dim_arg("dilation", spatial, 1) : std::vector<int64_t>(spatial, 1);
  std::vector<int64_t> pads = call.per_dim_arg("pad", spatial, 0, true);
  p.pad_before.assign(pads.begin(), pads.begin() + spatial);
  p.pad_after.assign(pads.begin() + spatial, pads.end());
  p.groups = groups ? call.int_arg("groups", 1) : 1;
  expect_at_least(call, "stride", p.stride, 1);
  expect_at_least(call, "dilation", p.dilation, 1);
  expect_at_least(call, "pad", pads, 0);
  expect_at_least(call, "groups", {p.groups}, 1);
  return p;
}

void check_groups(const BuiltinCall& call, int64_t c, int64_t k, int64_t w_channels, int64_t groups) {
  if (c % groups != 0 || k % groups != 0)
    call.fail(fmt::format("shape mismatch in '{}': {} input and {} output channels are not divisible by groups = {}",
                          call.function(), c, k, groups));
  if (w_channels != c / groups)
    call.fail_at(call.arg_loc(1), fmt::format("shape mismatch in '{}': the weight has {} input channels but the input has {} "
                                              "(over {} group{})",
                                              call.function(), w_channels, c, groups, groups == 1 ? "" : "s"));
}

// Channels-first convolution with `spatial` window dimensions: X[N, C, S...], W[K, C/g, R...].
TensorRef conv_channels_first(const BuiltinCall& call, int spatial, bool groups, const char* x_layout, const char* w_layout,
                              const char* suffix) {
  if (groups) {
    call.allow_keywords({"stride", "pad", "dilation", "groups"});
  } else {
    call.allow_keywords({"stride", "pad", "dilation"});
  }
  call.expect_tensors(2);
  call.expect_rank(0, 2 + spatial, x_layout);
  call.expect_rank(1, 2 + spatial, w_layout);
  DType t = common_numeric_dtype(call);
  WindowParams p = read_window_params(call, spatial, true, groups);
  const TensorRef &x = call.tensor(0), &w = call.tensor(1);
  int64_t c = x.shape[1], k = w.shape[0], cg = w.shape[1];
  check_groups(call, c, k, cg, p.groups);
  TensorRef padded = pad_dims(call, x, 2, p.pad_before, p.pad_after, make_const(t, 0));

  std::vector<int64_t> out_shape = {x.shape[0], k};
  for (int d = 0; d < spatial; ++d)
    out_shape.push_back(window_output_extent(call, x.shape[2 + d], p.pad_before[d] + p.pad_after[d], w.shape[2 + d],
                                             p.stride[d], p.dilation[d]));
  auto axes = make_axes(out_shape);
  IterVar rc{make_var("rc"), cg};
  std::vector<IterVar> reduce_axes = {rc};
  Expr channel = rc.var;
  if (p.groups > 1) channel = add(mul(div(axes[1].var, int_imm(k / p.groups)), int_imm(cg)), rc.var);
  std::vector<Expr> x_idx = {axes[0].var, channel};
  std::vector<Expr> w_idx = {axes[1].var, rc.var};
  static const char* kWindowNames[] = {"rx", "ry", "rz"};
  for (int d = 0; d < spatial; ++d) {
    IterVar r{make_var(kWindowNames[spatial - 1 - d]), w.shape[2 + d]};
    reduce_axes.push_back(r);
    x_idx.push_back(add(mul(axes[2 + d].var, int_imm(p.stride[d])), mul(r.var, int_imm(p.dilation[d]))));
    w_idx.push_back(r.var);
  }
  Expr body = reduce(ReduceOp::Sum, reduce_axes, mul(load_tensor(padded, x_idx), load_tensor(w, w_idx)));
  return call.define(suffix, std::move(axes), body);
}

TensorRef conv1d_ncw(const BuiltinCall& call) { return conv_channels_first(call, 1, false, "[N, C, L]", "[K, C, R]", "conv1d"); }

TensorRef conv2d_nchw(const BuiltinCall& call) {
  return conv_channels_first(call, 2, true, "[N, C, H, W]", "[K, C/groups, R, S]", "conv2d");
}

TensorRef conv3d_ncdhw(const BuiltinCall& call) {
  return conv_channels_first(call, 3, false, "[N, C, D, H, W]", "[K, C, T, R, S]", "conv3d");
}

TensorRef conv2d_nhwc(const BuiltinCall& call) {
  call.allow_keywords({"stride", "pad", "dilation", "groups"});
  call.expect_tensors(2);
  call.expect_rank(0, 4, "[N, H, W, C]");
  call.expect_rank(1, 4, "[R, S, C/groups, K]");
  DType t = common_numeric_dtype(call);
  WindowParams p = read_window_params(call, 2, true, true);
  const TensorRef &x = call.tensor(0), &w = call.tensor(1);
  int64_t c = x.shape[3], k = w.shape[3], cg = w.shape[2];
  check_groups(call, c, k, cg, p.groups);
  TensorRef padded = pad_dims(call, x, 1, p.pad_before, p.pad_after, make_const(t, 0));
  int64_t oh = window_output_extent(call, x.shape[1], p.pad_before[0] + p.pad_after[0], w.shape[0], p.stride[0], p.dilation[0]);
  int64_t ow = window_output_extent(call, x.shape[2], p.pad_before[1] + p.pad_after[1], w.shape[1], p.stride[1], p.dilation[1]);
  auto axes = make_axes({x.shape[0], oh, ow, k});
  IterVar ry{make_var("ry"), w.shape[0]}, rx{make_var("rx"), w.shape[1]}, rc{make_var("rc"), cg};
  Expr channel = rc.var;
  if (p.groups > 1) channel = add(mul(div(axes[3].var, int_imm(k / p.groups)), int_imm(cg)), rc.var);
  Expr h = add(mul(axes[1].var, int_imm(p.stride[0])), mul(ry.var, int_imm(p.dilation[0])));
  Expr wd = add(mul(axes[2].var, int_imm(p.stride[1])), mul(rx.var, int_imm(p.dilation[1])));
  Expr body = reduce(ReduceOp::Sum, {ry, rx, rc},
                     mul(load_tensor(padded, {axes[0].var, h, wd, channel}), load_tensor(w, {ry.var, rx.var, rc.var, axes[3].var})));
  return call.define("conv2d", std::move(axes), body);
}

// W[C, M, R, S] with channel multiplier M (1 in the common case): output channel q reads input
// channel q / M.
TensorRef depthwise_conv2d_nchw(const BuiltinCall& call) {
  call.allow_keywords({"stride", "pad", "dilation"});
  call.expect_tensors(2);
  call.expect_rank(0, 4, "[N, C, H, W]");
  call.expect_rank(1, 4, "[C, 1, R, S]");
  DType t = common_numeric_dtype(call);
  WindowParams p = read_window_params(call, 2, true, false);
  const TensorRef &x = call.tensor(0), &w = call.tensor(1);
  int64_t c = x.shape[1], m = w.shape[1];
  if (w.shape[0] != c)
    call.fail_at(call.arg_loc(1), fmt::format("shape mismatch in '{}': the weight has {} channels but the input has {}",
                                              call.function(), w.shape[0], c));
  TensorRef padded = pad_dims(call, x, 2, p.pad_before, p.pad_after, make_const(t, 0));
  int64_t oh = window_output_extent(call, x.shape[2], p.pad_before[0] + p.pad_after[0], w.shape[2], p.stride[0], p.dilation[0]);
  int64_t ow = window_output_extent(call, x.shape[3], p.pad_before[1] + p.pad_after[1], w.shape[3], p.stride[1], p.dilation[1]);
  auto axes = make_axes({x.shape[0], c * m, oh, ow});
  IterVar ry{make_var("ry"), w.shape[2]}, rx{make_var("rx"), w.shape[3]};
  Expr in_channel = div(axes[1].var, int_imm(m));
  Expr h = add(mul(axes[2].var, int_imm(p.stride[0])), mul(ry.var, int_imm(p.dilation[0])));
  Expr wd = add(mul(axes[3].var, int_imm(p.stride[1])), mul(rx.var, int_imm(p.dilation[1])));
  Expr body = reduce(ReduceOp::Sum, {ry, rx},
                     mul(load_tensor(padded, {axes[0].var, in_channel, h, wd}),
                         load_tensor(w, {in_channel, mod(axes[1].var, int_imm(m)), ry.var, rx.var})));
  return call.define("depthwise_conv2d", std::move(axes), body);
}

// Y[y] = sum of X[i] * W[r] over y = i * stride + r - pad, per spatial dimension, computed by
// output phase so that no zero of a stride-dilated input is multiplied: for y = yq * stride + py
// and u = py + pad, the taps are r = u % stride + stride * q and i = yq + u / stride - q, with
// q < ceil(window / stride). The phases are their own axes of an intermediate [N, K, Hq, stride,
// Wq, stride] (the output's own memory order when the stride divides it), which the result reads
// back element for element. The input is padded so that every such i reads a zero outside it,
// the window with zeros up to stride * ceil(window / stride), so the reduction is rectangular.
TensorRef conv2d_transpose_nchw(const BuiltinCall& call) {
  call.allow_keywords({"stride", "pad", "output_pad"});
  call.expect_tensors(2);
  call.expect_rank(0, 4, "[N, C, H, W]");
  call.expect_rank(1, 4, "[C, K, R, S]");
  DType t = common_numeric_dtype(call);
  WindowParams p = read_window_params(call, 2, false, false);
  std::vector<int64_t> output_pad = call.per_dim_arg("output_pad", 2, 0);
  expect_at_least(call, "output_pad", output_pad, 0);
  const TensorRef &x = call.tensor(0), &w = call.tensor(1);
  if (w.shape[0] != x.shape[1])
    call.fail_at(call.arg_loc(1), fmt::format("shape mismatch in '{}': the weight has {} input channels but the input has {}",
                                              call.function(), w.shape[0], x.shape[1]));
  int64_t out[2], taps[2], quotient[2];
  std::vector<int64_t> x_before(2), x_after(2), w_after(2);
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x.shape[2 + d], window = w.shape[2 + d], stride = p.stride[d], pad = p.pad_before[d];
    if (output_pad[d] >= stride)
      call.fail(fmt::format("'output_pad' of '{}' must be smaller than the stride, given {} with stride {}", call.function(),
                            output_pad[d], stride));
    int64_t dilated = 0;
    if (__builtin_mul_overflow(in - 1, stride, &dilated) || dilated > kMaxElements)
      call.fail(fmt::format("'{}' would make a tensor with more than 2^40 elements (stride {})", call.function(), stride));
    out[d] = dilated - pad - p.pad_after[d] + window + output_pad[d];
    if (out[d] < 1) call.fail(fmt::format("shape mismatch in '{}': the output would be empty", call.function()));
    taps[d] = (window + stride - 1) / stride;
    quotient[d] = (out[d] + stride - 1) / stride;
    // i = yq + u / stride - q runs from pad / stride - (taps - 1) to quotient - 1 + (stride - 1 + pad) / stride.
    x_before[d] = std::max<int64_t>(0, taps[d] - 1 - pad / stride);
    x_after[d] = std::max<int64_t>(0, quotient[d] - 1 + (stride - 1 + pad) / stride - (in - 1));
    w_after[d] = taps[d] * stride - window;
  }
  // The result is checked first: the padded window is larger than it when the stride is large.
  const std::vector<int64_t> out_shape = {x.shape[0], w.shape[1], out[0], out[1]};
  call.expect_within_size_limit(out_shape);
  TensorRef padded_x = pad_dims(call, x, 2, x_before, x_after, make_const(t, 0));
  TensorRef padded_w = pad_dims(call, w, 2, {0, 0}, w_after, make_const(t, 0), "window_pad");

  auto phase_axes = make_axes({x.shape[0], w.shape[1], quotient[0], p.stride[0], quotient[1], p.stride[1]});
  IterVar rc{make_var("rc"), x.shape[1]}, ry{make_var("ry"), taps[0]}, rx{make_var("rx"), taps[1]};
  std::vector<Expr> x_idx = {phase_axes[0].var, rc.var}, w_idx = {rc.var, phase_axes[1].var};
  const IterVar* tap[2] = {&ry, &rx};
  for (int d = 0; d < 2; ++d) {
    const Expr& yq = phase_axes[2 + 2 * d].var;
    Expr u = add(phase_axes[3 + 2 * d].var, int_imm(p.pad_before[d]));
    Expr stride = int_imm(p.stride[d]);
    x_idx.push_back(add(sub(add(yq, div(u, stride)), tap[d]->var), int_imm(x_before[d])));
    w_idx.push_back(add(mod(u, stride), mul(tap[d]->var, stride)));
  }
  TensorRef phases = call.define("phases", std::move(phase_axes),
                                 reduce(ReduceOp::Sum, {rc, ry, rx}, mul(load_tensor(padded_x, x_idx), load_tensor(padded_w, w_idx))));

  auto axes = make_axes(out_shape);
  std::vector<Expr> phase_idx = {axes[0].var, axes[1].var};
  for (int d = 0; d < 2; ++d) {
    phase_idx.push_back(div(axes[2 + d].var, int_imm(p.stride[d])));
    phase_idx.push_back(mod(axes[2 + d].var, int_imm(p.stride[d])));
  }
  return call.define("conv2d_transpose", std::move(axes), load_tensor(phases, phase_idx));
}

}  // namespace

void register_convolution(std::vector<std::pair<std::string, BuiltinFn>>& table) {
  table.emplace_back("conv1d_ncw", conv1d_ncw);
  table.emplace_back("conv2d_nchw", conv2d_nchw);
  table.emplace_back("conv2d_nhwc", conv2d_nhwc);
  table.emplace_back("conv3d_ncdhw", conv3d_ncdhw);
  table.emplace_back("depthwise_conv2d_nchw", depthwise_conv2d_nchw);
  table.emplace_back("conv2d_transpose_nchw", conv2d_transpose_nchw);
}

}  // namespace ansor
