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
// Timed by the benchmarks' protocol (protocol.h, bench/README.md): ours and oneDNN interleaved
// over rounds at the same thread count with the same spin before their threads sleep, oneDNN's
// output layout of its choosing, then the same at one thread.
//
// GB/s counts every argument once (bytes read + bytes written). The streaming bandwidth at a
// working set of W bytes is the best of three copies of W/2 bytes: ansor's own copy kernel,
// memcpy, and a copy loop split over the runtime's threads.
#include <fmt/format.h>
#include <fmt/ranges.h>

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

constexpr double kLayerNormEps = 1e-5;

struct Operator {
  std::string name;    // "softmax"
  std::string shape;   // "256x2048"
  std::string kernel;  // the kernel's name in `def`
  std::string def;     // kernels.def text of that one kernel
  bench::LibraryPreparer onednn;
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

std::vector<Operator> make_operators(const std::map<std::string, std::string>& shapes) {
  std::vector<Operator> ops;
  for (const auto& s : parse_shapes(shapes.at("--softmax"), 2)) {
    std::string kernel = fmt::format("softmax_{}x{}", s[0], s[1]);
    ops.push_back({"softmax", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n Y = softmax(X, axis = -1)\n}}", kernel, s[0], s[1]),
                   bench::onednn_softmax({s[0], s[1]}, 1)});
  }
  for (const auto& s : parse_shapes(shapes.at("--layer-norm"), 2)) {
    std::string kernel = fmt::format("layer_norm_{}x{}", s[0], s[1]);
    ops.push_back({"layer_norm", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n gamma = const f32[{}]\n beta = const f32[{}]\n"
                               " Y = layer_norm(X, gamma, beta, axis = -1, eps = {})\n}}",
                               kernel, s[0], s[1], s[1], s[1], kLayerNormEps),
                   bench::onednn_layer_norm({s[0], s[1]}, kLayerNormEps)});
  }
  for (const auto& s : parse_shapes(shapes.at("--bias-gelu"), 2)) {
    std::string kernel = fmt::format("bias_gelu_{}x{}", s[0], s[1]);
    ops.push_back({"bias+gelu", fmt::format("{}x{}", s[0], s[1]), kernel,
                   fmt::format("kernel {} {{\n X = input f32[{}, {}]\n b = const f32[{}]\n Y = gelu(bias_add(X, b, axis = 1))\n}}", kernel,
                               s[0], s[1], s[1]),
                   bench::onednn_bias_gelu(s[0], s[1])});
  }
  for (const auto& s : parse_shapes(shapes.at("--dense"), 3)) {
    std::string shape = fmt::format("{}x{}x{}", s[0], s[1], s[2]);
    std::string inputs = fmt::format(" X = input f32[{}, {}]\n W = const f32[{}, {}]\n", s[0], s[1], s[2], s[1]);
    ops.push_back({"dense+bias+gelu", shape, "dense_bias_gelu_" + shape,
                   fmt::format("kernel dense_bias_gelu_{} {{\n{} b = const f32[{}]\n Y = gelu(bias_add(dense(X, W), b, axis = 1))\n}}", shape,
                               inputs, s[2]),
                   bench::onednn_dense(s[0], s[1], s[2], bench::DenseEpilogue::BiasGelu)});
    ops.push_back({"dense", shape, "dense_" + shape, fmt::format("kernel dense_{} {{\n{} Y = dense(X, W)\n}}", shape, inputs),
                   bench::onednn_dense(s[0], s[1], s[2], bench::DenseEpilogue::None)});
  }
  return ops;
}

struct Row {
  std::string op, shape;
  double bytes = 0;
  bench::Spread ours;  // packed once where the kernel has const inputs
  std::optional<bench::Spread> ours_one_thread;
  bench::LibraryRow onednn;
  double plain = 0, naive = 0;  // seconds
  double stream_gbs = 0;
};

double gbs(double bytes, double seconds) { return bytes / seconds / 1e9; }

std::string table(const std::vector<Row>& rows) {
  std::string out =
      "| operator | shape | ours ms [min–max] | GB/s | oneDNN ms [min–max] | GB/s | speed vs oneDNN | % stream (ours) | % stream (oneDNN) | "
      "1 thread: ours ms | 1 thread: oneDNN ms | 1 thread: speed | naive ms | ours plain call ms | max abs diff |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    const std::optional<double> theirs = r.onednn.reported_seconds();
    const double their_gbs = theirs ? gbs(r.bytes, *theirs) : 0;
    out += fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {} | {:.0f}% | {} | {} | {} | {} | {} | {} | {:.1e} |\n", r.op, r.shape,
                       bench::format_ms(r.ours), gbs(r.bytes, r.ours.median), bench::library_cell(r.onednn),
                       theirs ? fmt::format("{:.1f}", their_gbs) : "—", theirs ? fmt::format("{:.2f}×", *theirs / r.ours.median) : "—",
                       100 * gbs(r.bytes, r.ours.median) / r.stream_gbs, theirs ? fmt::format("{:.0f}%", 100 * their_gbs / r.stream_gbs) : "—",
                       r.ours_one_thread ? bench::format_ms(r.ours_one_thread->median) : "—",
                       r.onednn.one_thread ? bench::format_ms(r.onednn.one_thread->median) : "—",
                       r.ours_one_thread && r.onednn.one_thread && theirs
                           ? fmt::format("{:.2f}×", r.onednn.one_thread->median / r.ours_one_thread->median)
                           : "—",
                       bench::format_ms(r.naive), bench::format_ms(r.plain), r.onednn.max_diff);
  }
  return out;
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows, const bench::StreamingCopies& copies) {
  std::ofstream out(path);
  out << "operator,shape,bytes,ours_ms,ours_min_ms,ours_max_ms,ours_plain_ms,onednn_ms,onednn_min_ms,onednn_max_ms,ours_one_thread_ms,"
         "onednn_one_thread_ms,onednn_implementation,naive_ms,stream_gbs,max_abs_diff\n";
  auto ms = [](std::optional<double> seconds) { return seconds ? fmt::format("{:.6f}", *seconds * 1e3) : std::string(); };
  for (const Row& r : rows) {
    const bool native = r.onednn.reported_seconds().has_value();
    out << fmt::format("{},{},{:.0f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{},{},\"{}\",{:.6f},{:.3f},{:.3e}\n", r.op, r.shape, r.bytes,
                       r.ours.median * 1e3, r.ours.min * 1e3, r.ours.max * 1e3, r.plain * 1e3, ms(native ? std::optional(r.onednn.time.median) : std::nullopt),
                       ms(native ? std::optional(r.onednn.time.min) : std::nullopt), ms(native ? std::optional(r.onednn.time.max) : std::nullopt),
                       ms(r.ours_one_thread ? std::optional(r.ours_one_thread->median) : std::nullopt),
                       ms(native && r.onednn.one_thread ? std::optional(r.onednn.one_thread->median) : std::nullopt), r.onednn.implementation,
                       r.naive * 1e3, r.stream_gbs, r.onednn.max_diff);
  }
  for (const auto& [n, c] : copies.all())
    out << fmt::format("copy (ansor),{},{:.0f},{:.6f},,,{:.6f},,,,,,,,{:.3f},\n", n, c.bytes(), c.ours * 1e3, c.ours * 1e3, c.best_gbs())
        << fmt::format("memcpy,{},{:.0f},{:.6f},,,,,,,,,,,{:.3f},\n", n, c.bytes(), c.libc * 1e3, c.best_gbs())
        << fmt::format("copy loop ({} threads),{},{:.0f},{:.6f},,,,,,,,,,,{:.3f},\n", ansor_get_num_threads(), n, c.bytes(), c.loop * 1e3,
                       c.best_gbs());
}

}  // namespace

int main(int argc, char** argv) {
  bench::enter_protocol_environment(argv);
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

  std::vector<Operator> ops = make_operators(shapes);
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
  // Every runtime at the tuning target's thread count, from here on.
  const int threads = measurer->target().threads;
  measurer.reset();
  bench::set_all_threads(threads);

  std::vector<Row> rows;
  bool all_agree = true;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ansor_kernel_info &tuned = built[i].tuned->info(), &naive = built[i].naive->info();
    bench::KernelArguments args(tuned);
    Row row;
    row.op = ops[i].name;
    row.shape = ops[i].shape;
    row.bytes = bench::argument_bytes(tuned);
    fmt::print("timing {} {}\n", row.op, row.shape);
    auto ours = [&] { args.has_const ? tuned.call_packed(args.packed_ptrs.data()) : tuned.call(args.plain_ptrs.data()); };
    ours();
    const ansor_tensor_info& output = tuned.args[tuned.num_args - 1];  // the last argument: these kernels have one output
    bench::Comparison compared = bench::compare_with_libraries(ours, {{"oneDNN", ops[i].onednn}}, args.inputs(), args.output_bytes(),
                                                               bench::output_checker(output, args.output(), built[i].tolerance), threads, true);
    row.ours = compared.ours;
    row.ours_one_thread = compared.ours_one_thread;
    row.onednn = compared.libraries.front();
    if (!row.onednn.agrees) {
      fmt::print(stderr, "{} {}: ours and oneDNN differ by up to {:.3e}\n", row.op, row.shape, row.onednn.max_diff);
      all_agree = false;
    }
    row.plain = bench::median_seconds([&] { tuned.call(args.plain_ptrs.data()); });
    row.naive = bench::median_seconds([&] { naive.call(args.plain_ptrs.data()); });
    rows.push_back(std::move(row));
  }
  copies.time();
  for (Row& row : rows) row.stream_gbs = copies.at(bench::copy_floats(row.bytes)).best_gbs();

  std::string implementations;
  for (const Row& r : rows)
    implementations += fmt::format("\n- {} {}: {}{}{}", r.op, r.shape, r.onednn.implementation,
                                   r.onednn.layouts.empty() ? "" : fmt::format(" (layouts: {})", r.onednn.layouts),
                                   r.onednn.non_native.empty() ? "" : fmt::format("; not counted: {}", r.onednn.non_native));
  std::string report = fmt::format(
      "Memory-bound operators on {}, {} threads on every side (ansor runtime; oneDNN {}.{}.{} on OpenMP), {} trials of the {} policy per "
      "kernel, kernels built by {}. Protocol (bench/README.md): ours (const inputs packed once) and oneDNN interleaved over {} rounds, "
      "medians of the rounds' medians with the fastest and slowest; then the same at 1 thread. {}.\n\n{}\n"
      "oneDNN implementations:{}\n\nStreaming copies (working set = bytes read + written):\n\n{}",
      target, threads, dnnl::version()->major, dnnl::version()->minor, dnnl::version()->patch, tune.trials, tune.policy, compiler,
      bench::kRounds, bench::wait_policy_description(), table(rows), implementations, copies.table());
  fmt::print("\n{}", report);
  std::filesystem::create_directories(out_dir);
  std::ofstream(std::filesystem::path(out_dir) / "memory_bound.md") << report;
  write_csv(std::filesystem::path(out_dir) / "memory_bound.csv", rows, copies);
  std::filesystem::remove_all(work_dir);
  if (temporary_cache) std::filesystem::remove_all(cache_dir);
  return all_agree ? 0 : 1;
}
