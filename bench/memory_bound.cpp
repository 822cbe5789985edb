// Memory-bound operators (softmax, layer_norm, bias + gelu, and a dense layer with a gelu
// epilogue) tuned by ansor and timed against oneDNN and the naive program in one run, beside
// the streaming bandwidth of copies of the same working set, so that each GB/s reads as a share
// of what this machine moves at that size.
//
//   bench_memory_bound [--trials N] [--policy P] [--cache DIR] [--out DIR] [--copy-mb MB]
//                      [--softmax MxN,...] [--layer-norm MxN,...] [--bias-gelu MxN,...] [--dense MxKxN,...]
//
// The default shapes cover both regimes: working sets that stay in the caches (up to 32 MiB, a
// Zen 3 L3) and, last of each operator, ones of 64-128 MiB that stream from memory (softmax
// 4096x2048, layer_norm 8192x1024, bias + gelu 8192x2048).
//
// Each kernel is tuned until it has N measured schedules; with --cache, those of earlier runs
// count (without it the records go to a temporary directory). --copy-mb: the large copy, per
// tensor (default 64).
//
// oneDNN's OpenMP threads spin between calls by default; on a shared, oversubscribed machine a
// spinning thread descheduled at a barrier costs whole scheduler ticks (oneDNN then reads ~12 ms
// for any operator). OMP_WAIT_POLICY=passive avoids that; the report says which policy ran.
//
// GB/s counts every argument once (bytes read + bytes written). The streaming bandwidth at a
// working set of W bytes is the best of three copies of W/2 bytes: ansor's own copy kernel,
// memcpy, and a copy loop split over the runtime's threads.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <dnnl.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bench_support.h"
#include "dag/output_tolerance.h"
#include "onednn_support.h"
#include "streaming_copy.h"
#include "tune/search_policy.h"

using namespace ansor;

namespace {

using dnnl::memory;

constexpr double kLayerNormEps = 1e-5;

using bench::OneDnn;
using bench::OneDnnTimer;
using bench::plain_desc;
using bench::time_primitive;
using bench::wrap;

OneDnnTimer onednn_softmax(OneDnn& d, int64_t m, int64_t n) {
  return [&d, m, n](const std::vector<const float*>& in, float* out) {
    memory::desc md = plain_desc({m, n});
    dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 1}, d.engine);
    return time_primitive(d, dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, wrap(d, md, in[0])}, {DNNL_ARG_DST, wrap(d, md, out)}});
  };
}

// The built-in's definition: biased variance over the last axis, eps inside the square root,
// then gamma and beta (inputs 1 and 2) per element of that axis.
OneDnnTimer onednn_layer_norm(OneDnn& d, int64_t m, int64_t n) {
  return [&d, m, n](const std::vector<const float*>& in, float* out) {
    memory::desc md = plain_desc({m, n}), param = plain_desc({n});
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, static_cast<float>(kLayerNormEps), flags},
                                                         d.engine);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, wrap(d, md, in[0])},
                                            {DNNL_ARG_SCALE, wrap(d, param, in[1])},
                                            {DNNL_ARG_SHIFT, wrap(d, param, in[2])},
                                            {DNNL_ARG_DST, wrap(d, md, out)}};
    // Inference may still want somewhere to put the statistics it computes.
    if (pd.mean_desc().get_size() > 0) {
      args.emplace(DNNL_ARG_MEAN, memory(pd.mean_desc(), d.engine));
      args.emplace(DNNL_ARG_VARIANCE, memory(pd.variance_desc(), d.engine));
    }
    return time_primitive(d, dnnl::layer_normalization_forward(pd), args);
  };
}

OneDnnTimer onednn_bias_gelu(OneDnn& d, int64_t m, int64_t n) {
  return [&d, m, n](const std::vector<const float*>& in, float* out) {
    memory::desc md = plain_desc({m, n}), bias = plain_desc({1, n});
    dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, md, bias, md}, bench::gelu_epilogue(), d.engine);
    return time_primitive(d, dnnl::binary(pd),
                          {{DNNL_ARG_SRC_0, wrap(d, md, in[0])}, {DNNL_ARG_SRC_1, wrap(d, bias, in[1])}, {DNNL_ARG_DST, wrap(d, md, out)}});
  };
}

struct Operator {
  std::string name;    // "softmax"
  std::string shape;   // "256x2048"
  std::string kernel;  // the kernel's name in `def`
  std::string def;     // kernels.def text of that one kernel
  OneDnnTimer onednn;
};

std::vector<int64_t> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, 'x')) dims.push_back(std::stoll(item));
  return dims;
}

std::vector<std::vector<int64_t>> parse_shapes(const std::string& text, size_t rank) {
  std::vector<std::vector<int64_t>> shapes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    shapes.push_back(parse_dims(item));
    if (shapes.back().size() != rank) throw std::invalid_argument(fmt::format("'{}' is not a shape of rank {}", item, rank));
  }
  return shapes;
}

std::vector<Operator> make_operators(OneDnn& d, const std::map<std::string, std::string>& shapes) {
  std::vector<Operator> ops;
  for (const auto& s : parse_shapes(shapes.at("--softmax"), 2)) {
    std::string kernel = fmt::format("softmax_{}x{}", s[0], s[1]);
    ops.push_back({"softmax", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n Y = softmax(X, axis = -1)\n}}", kernel, s[0], s[1]),
                   onednn_softmax(d, s[0], s[1])});
  }
  for (const auto& s : parse_shapes(shapes.at("--layer-norm"), 2)) {
    std::string kernel = fmt::format("layer_norm_{}x{}", s[0], s[1]);
    ops.push_back({"layer_norm", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n gamma = const f32[{}]\n beta = const f32[{}]\n"
                               " Y = layer_norm(X, gamma, beta, axis = -1, eps = {})\n}}",
                               kernel, s[0], s[1], s[1], s[1], kLayerNormEps),
                   onednn_layer_norm(d, s[0], s[1])});
  }
  for (const auto& s : parse_shapes(shapes.at("--bias-gelu"), 2)) {
    std::string kernel = fmt::format("bias_gelu_{}x{}", s[0], s[1]);
    ops.push_back({"bias+gelu", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n b = const f32[{}]\n Y = gelu(bias_add(X, b, axis = 1))\n}}", kernel,
                               s[0], s[1], s[1]),
                   onednn_bias_gelu(d, s[0], s[1])});
  }
  for (const auto& s : parse_shapes(shapes.at("--dense"), 3)) {
    std::string shape = fmt::format("{}x{}x{}", s[0], s[1], s[2]);
    std::string inputs = fmt::format(" X = input f32[{}, {}]\n W = const f32[{}, {}]\n", s[0], s[1], s[2], s[1]);
    ops.push_back({"dense+bias+gelu", shape, "dense_bias_gelu_" + shape,
                   fmt::format("kernel dense_bias_gelu_{} {{\n{} b = const f32[{}]\n Y = gelu(bias_add(dense(X, W), b, axis = 1))\n}}", shape,
                               inputs, s[2]),
                   bench::onednn_dense(d, s[0], s[1], s[2], true)});
    ops.push_back({"dense", shape, "dense_" + shape, fmt::format("kernel dense_{} {{\n{} Y = dense(X, W)\n}}", shape, inputs),
                   bench::onednn_dense(d, s[0], s[1], s[2], false)});
  }
  return ops;
}

struct Row {
  std::string op, shape;
  double bytes = 0;
  double ours = 0, plain = 0, onednn = 0, naive = 0;  // seconds; ours is packed once where there are const inputs
  double max_diff = 0, reference_max = 0;             // |ours - oneDNN|, |oneDNN|
  double stream_gbs = 0;
};

double gbs(double bytes, double seconds) { return bytes / seconds / 1e9; }

std::string table(const std::vector<Row>& rows) {
  std::string out =
      "| operator | shape | ours ms | GB/s | oneDNN ms | GB/s | ours/oneDNN time | % stream (ours) | % stream (oneDNN) | naive ms | "
      "ours plain call ms | max abs diff |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows)
    out += fmt::format("| {} | {} | {:.4f} | {:.1f} | {:.4f} | {:.1f} | {:.2f} | {:.0f}% | {:.0f}% | {:.3f} | {:.4f} | {:.1e} |\n", r.op,
                       r.shape, r.ours * 1e3, gbs(r.bytes, r.ours), r.onednn * 1e3, gbs(r.bytes, r.onednn), r.ours / r.onednn,
                       100 * gbs(r.bytes, r.ours) / r.stream_gbs, 100 * gbs(r.bytes, r.onednn) / r.stream_gbs, r.naive * 1e3,
                       r.plain * 1e3, r.max_diff);
  return out;
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows, const bench::StreamingCopies& copies) {
  std::ofstream out(path);
  out << "operator,shape,bytes,ours_ms,ours_plain_ms,onednn_ms,naive_ms,stream_gbs,max_abs_diff\n";
  for (const Row& r : rows)
    out << fmt::format("{},{},{:.0f},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f},{:.3e}\n", r.op, r.shape, r.bytes, r.ours * 1e3, r.plain * 1e3,
                       r.onednn * 1e3, r.naive * 1e3, r.stream_gbs, r.max_diff);
  for (const auto& [n, c] : copies.all())
    out << fmt::format("copy (ansor),{},{:.0f},{:.6f},{:.6f},,,{:.3f},\n", n, c.bytes(), c.ours * 1e3, c.ours * 1e3, c.best_gbs())
        << fmt::format("memcpy,{},{:.0f},{:.6f},,,,{:.3f},\n", n, c.bytes(), c.libc * 1e3, c.best_gbs())
        << fmt::format("copy loop ({} threads),{},{:.0f},{:.6f},,,,{:.3f},\n", ansor_get_num_threads(), n, c.bytes(), c.loop * 1e3,
                       c.best_gbs());
}

}  // namespace

int main(int argc, char** argv) {
  TuneOptions tune;
  std::string cache_dir, out_dir = ".";
  int64_t copy_mb = 64;
  std::map<std::string, std::string> shapes = {
      {"--softmax", "128x1000,256x2048,4096x2048"},
      {"--layer-norm", "128x768,512x1024,8192x1024"},
      {"--bias-gelu", "256x1024,4096x1024,8192x2048"},
      {"--dense", "128x768x3072"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--trials") tune.trials = std::stoi(value);
    else if (flag == "--policy") tune.policy = value;
    else if (flag == "--cache") cache_dir = value;
    else if (flag == "--out") out_dir = value;
    else if (flag == "--copy-mb") copy_mb = std::stoll(value);
    else if (shapes.contains(flag)) shapes[flag] = value;
    else {
      fmt::print(stderr, "unknown option {}\n", flag);
      return 2;
    }
  }
  std::vector<std::string> policies = search_policy_names();
  if (std::find(policies.begin(), policies.end(), tune.policy) == policies.end()) {
    fmt::print(stderr, "unknown search policy '{}'; the policies are: {}\n", tune.policy, fmt::join(policies, ", "));
    return 2;
  }

  OneDnn onednn;
  // oneDNN runs on OpenMP here: give it the thread count our kernels run with.
  omp_set_num_threads(ansor_get_num_threads());
  std::vector<Operator> ops = make_operators(onednn, shapes);
  std::string work_dir = bench::temp_path("memory-bound");
  bool temporary_cache = cache_dir.empty();
  if (temporary_cache) cache_dir = work_dir + "-cache";
  std::unique_ptr<Measurer> measurer = bench::host_measurer(work_dir);
  std::string target = measurer->target().to_string(), compiler = measurer->compiler().identity();
  TuningCache cache(cache_dir);

  // Tuning first, timing after, so that no compile of ours runs while anything is timed.
  struct Built {
    std::unique_ptr<bench::LoadedKernel> tuned, naive;
    double tolerance;  // the project's output tolerance rule for the kernel
  };
  std::vector<Built> built;
  for (const Operator& op : ops) {
    Kernel kernel = bench::load_kernel(op.def, op.kernel);
    State best = bench::tune_to_budget(kernel, *measurer, cache, tune);
    built.push_back({std::make_unique<bench::LoadedKernel>(op.kernel, best, work_dir),
                     std::make_unique<bench::LoadedKernel>(op.kernel, State(std::make_shared<const ComputeDAG>(kernel.dag)), work_dir),
                     output_tolerance(kernel.dag)});
  }
  bench::StreamingCopies copies;
  for (const Built& b : built) copies.add(bench::copy_floats(bench::argument_bytes(b.tuned->info())));
  copies.add(copy_mb * (1 << 20) / 4);
  copies.build(*measurer, cache, tune, work_dir);
  measurer.reset();

  std::vector<Row> rows;
  bool all_agree = true;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ansor_kernel_info &tuned = built[i].tuned->info(), &naive = built[i].naive->info();
    bench::KernelArguments args(tuned);
    Row row;
    row.op = ops[i].name;
    row.shape = ops[i].shape;
    row.bytes = bench::argument_bytes(tuned);
    std::vector<float> reference(args.output().size());
    row.onednn = ops[i].onednn(args.inputs(), reference.data());
    row.plain = bench::median_seconds([&] { tuned.call(args.plain_ptrs.data()); });
    for (size_t j = 0; j < reference.size(); ++j) {
      row.max_diff = std::max(row.max_diff, static_cast<double>(std::fabs(args.output()[j] - reference[j])));
      row.reference_max = std::max(row.reference_max, static_cast<double>(std::fabs(reference[j])));
    }
    row.ours = args.has_const ? bench::median_seconds([&] { tuned.call_packed(args.packed_ptrs.data()); }) : row.plain;
    row.naive = bench::median_seconds([&] { naive.call(args.plain_ptrs.data()); });
    if (row.max_diff > built[i].tolerance * std::max(1.0, row.reference_max)) {
      fmt::print(stderr, "{} {}: ours and oneDNN differ by up to {:.3e}\n", row.op, row.shape, row.max_diff);
      all_agree = false;
    }
    rows.push_back(row);
  }
  copies.time();
  for (Row& row : rows) row.stream_gbs = copies.at(bench::copy_floats(row.bytes)).best_gbs();

  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::string report = fmt::format(
      "Memory-bound operators on {}, {} threads (ansor runtime; oneDNN {}.{}.{} on OpenMP set to the same, OMP_WAIT_POLICY={}), {} "
      "trials of the {} policy per kernel, kernels built by {}. Medians; ours is packed once where the kernel has const inputs.\n\n{}\n"
      "Streaming copies (working set = bytes read + written):\n\n{}",
      target, ansor_get_num_threads(), dnnl::version()->major, dnnl::version()->minor, dnnl::version()->patch,
      wait_policy ? wait_policy : "unset", tune.trials, tune.policy, compiler, table(rows), copies.table());
  fmt::print("\n{}", report);
  std::filesystem::create_directories(out_dir);
  std::ofstream(std::filesystem::path(out_dir) / "memory_bound.md") << report;
  write_csv(std::filesystem::path(out_dir) / "memory_bound.csv", rows, copies);
  std::filesystem::remove_all(work_dir);
  if (temporary_cache) std::filesystem::remove_all(cache_dir);
  return all_agree ? 0 : 1;
}
