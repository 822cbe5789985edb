// A search policy (random: sketches annotated at random, paper §4; ansor: the learned model's
// evolutionary search, §5) on the Ansor paper's GEMM and a ResNet convolution from an empty
// cache: the best GFLOP/s after each budget of trials, beside OpenBLAS (GEMM) and oneDNN
// (convolution) timed in the same run.
//
//   bench_random_search [--trials 64,200,1000] [--kernel matmul|conv2d]... [--seed S] [--policy P]
#include <cblas.h>
#include <fmt/format.h>

#include <dnnl.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bench_support.h"
#include "tune/tuner.h"

using namespace ansor;

namespace {

double time_openblas_gemm() {
  const int n = 1024;
  std::vector<float> a = bench::random_floats(n * n, 1), b = bench::random_floats(n * n, 2), c(n * n);
  openblas_set_num_threads(ansor_get_num_threads());
  return bench::median_seconds(
      [&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a.data(), n, b.data(), n, 0, c.data(), n); });
}

double time_onednn_conv() {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::dims src = {1, 128, 28, 28}, weights = {128, 128, 3, 3}, dst = {1, 128, 28, 28};
  auto src_md = memory::desc(src, memory::data_type::f32, memory::format_tag::nchw);
  auto w_md = memory::desc(weights, memory::data_type::f32, memory::format_tag::oihw);
  auto dst_md = memory::desc(dst, memory::data_type::f32, memory::format_tag::nchw);
  // oneDNN picks its own blocked layouts; the weights are reordered once, like a packed input.
  auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  // oneDNN 2.x: an operation descriptor, then the primitive descriptor for the engine.
  convolution_forward::desc conv_desc(prop_kind::forward_inference, algorithm::convolution_direct, any(src), any(weights), any(dst),
                                      {1, 1}, {1, 1}, {1, 1});
  convolution_forward::primitive_desc pd(conv_desc, eng);
  std::vector<float> x = bench::random_floats(128 * 28 * 28, 3), w = bench::random_floats(128 * 128 * 9, 4), y(128 * 28 * 28);
  memory x_mem(src_md, eng, x.data()), w_mem(w_md, eng, w.data()), y_mem(dst_md, eng, y.data());
  memory x_blocked(pd.src_desc(), eng), w_blocked(pd.weights_desc(), eng), y_blocked(pd.dst_desc(), eng);
  reorder(w_mem, w_blocked).execute(s, w_mem, w_blocked);
  convolution_forward conv(pd);
  double t = bench::median_seconds([&] {
    reorder(x_mem, x_blocked).execute(s, x_mem, x_blocked);
    conv.execute(s, {{DNNL_ARG_SRC, x_blocked}, {DNNL_ARG_WEIGHTS, w_blocked}, {DNNL_ARG_DST, y_blocked}});
    reorder(y_blocked, y_mem).execute(s, y_blocked, y_mem);
    s.wait();
  });
  return t;
}

std::vector<int> parse_budgets(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> budgets = {64, 200, 1000};
  std::vector<std::string> kernels;
  uint64_t seed = 0;
  std::string policy = TuneOptions().policy;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--trials") budgets = parse_budgets(argv[i + 1]);
    if (flag == "--kernel") kernels.push_back(argv[i + 1]);
    if (flag == "--seed") seed = std::stoull(argv[i + 1]);
    if (flag == "--policy") policy = argv[i + 1];
  }
  if (kernels.empty()) kernels = {"matmul", "conv2d"};

  // The vendors are timed before and after the search and the faster time is kept, so a noisy
  // minute never flatters the search.
  double vendor_before[2] = {time_openblas_gemm(), time_onednn_conv()};
  std::string work_dir = bench::temp_path("search");
  std::unique_ptr<Measurer> measurer = bench::host_measurer(work_dir);
  std::string cache_dir = work_dir + "-cache";

  fmt::print("{} search on {} ({} threads) with {}\n", policy, measurer->target().to_string(), measurer->target().threads,
             measurer->compiler().identity());
  struct Row {
    std::string kernel;
    int trials;
    double best_gflops;
  };
  std::vector<Row> rows;
  for (const std::string& name : kernels) {
    Kernel kernel = bench::load_kernel(bench::kPaperKernels, name);
    TuningCache cache(cache_dir);
    int done = 0;
    for (int budget : budgets) {
      TuneOptions tune;
      tune.trials = budget - done;
      tune.seed = seed + static_cast<uint64_t>(done);
      tune.policy = policy;
      TuneSummary summary = tune_kernel(kernel, *measurer, cache, tune, std::cout);
      done = budget;
      rows.push_back({name, budget, summary.best ? bench::gflops(kernel.dag.flop_count(), summary.best->seconds) : 0});
    }
  }
  double vendor_after[2] = {time_openblas_gemm(), time_onednn_conv()};
  const double vendor_flops[2] = {bench::load_kernel(bench::kPaperKernels, "matmul").dag.flop_count(), bench::load_kernel(bench::kPaperKernels, "conv2d").dag.flop_count()};
  fmt::print("\nOpenBLAS {:.1f} GFLOP/s before the search, {:.1f} after; oneDNN {:.1f} before, {:.1f} after\n",
             bench::gflops(vendor_flops[0], vendor_before[0]), bench::gflops(vendor_flops[0], vendor_after[0]),
             bench::gflops(vendor_flops[1], vendor_before[1]), bench::gflops(vendor_flops[1], vendor_after[1]));
  fmt::print("\n{:<8} {:>6} {:>12} {:>14} {:>9}\n", "kernel", "trials", "best GFLOP/s", "vendor GFLOP/s", "ratio");
  for (const Row& row : rows) {
    int v = row.kernel == "matmul" ? 0 : 1;
    double vendor = bench::gflops(vendor_flops[v], std::min(vendor_before[v], vendor_after[v]));
    fmt::print("{:<8} {:>6} {:>12.1f} {:>14.1f} {:>8.2f}x  ({})\n", row.kernel, row.trials, row.best_gflops, vendor, row.best_gflops / vendor,
               v == 0 ? "OpenBLAS" : "oneDNN");
  }
  std::filesystem::remove_all(cache_dir);
  return 0;
}
