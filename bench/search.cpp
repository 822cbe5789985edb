// Search efficiency: each search policy tunes each kernel from an empty cache of its own; at
// every budget of trials, the best GFLOP/s so far and the wall seconds spent (search, building,
// measuring), beside the vendor library timed in the same run: OpenBLAS's sgemm for the GEMM,
// oneDNN for the convolution (NHWC, bias and relu post-op) and the dense layer (inner product,
// bias and gelu post-op).
//
//   bench_search [--kernel matmul|conv2d_nhwc_bias_relu|dense_bias_gelu]... [--policy P,...]
//                [--trials 64,200,500,1000] [--seed S] [--csv FILE]
//
// Defaults: the three kernels; policies ansor, ansor-no-crossover and random.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bench_support.h"
#include "onednn_support.h"
#include "tune/tuner.h"

using namespace ansor;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

// Inputs in the kernel's argument order, drawn at random, and an output buffer.
struct VendorBuffers {
  std::vector<std::vector<float>> inputs;
  std::vector<float> out;
  std::vector<const float*> pointers() const {
    std::vector<const float*> p;
    for (const auto& in : inputs) p.push_back(in.data());
    return p;
  }
};

VendorBuffers buffers(const std::vector<size_t>& input_sizes, size_t out_size) {
  VendorBuffers b;
  for (size_t i = 0; i < input_sizes.size(); ++i) b.inputs.push_back(bench::random_floats(input_sizes[i], static_cast<unsigned>(i + 1)));
  b.out.resize(out_size);
  return b;
}

struct Vendor {
  std::string name;
  std::function<double()> time;  // median seconds of one call
};

Vendor vendor_for(const std::string& kernel, bench::OneDnn& d) {
  if (kernel == "matmul") {
    auto b = std::make_shared<VendorBuffers>(buffers({1024 * 1024, 1024 * 1024}, 1024 * 1024));
    return {"OpenBLAS", [b] {
              const int n = 1024;
              openblas_set_num_threads(ansor_get_num_threads());
              return bench::median_seconds([&] {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, b->inputs[0].data(), n, b->inputs[1].data(), n, 0,
                            b->out.data(), n);
              });
            }};
  }
  if (kernel == "conv2d_nhwc_bias_relu") {
    auto b = std::make_shared<VendorBuffers>(buffers({28 * 28 * 128, 3 * 3 * 128 * 128, 128}, 28 * 28 * 128));
    bench::OneDnnTimer timer = bench::onednn_conv2d_nhwc_bias_relu(d, 1, 28, 28, 128, 128, 3, 1);
    return {"oneDNN", [b, timer] { return timer(b->pointers(), b->out.data()); }};
  }
  if (kernel == "dense_bias_gelu") {
    auto b = std::make_shared<VendorBuffers>(buffers({128 * 768, 3072 * 768, 3072}, 128 * 3072));
    bench::OneDnnTimer timer = bench::onednn_dense(d, 128, 768, 3072, true);
    return {"oneDNN", [b, timer] { return timer(b->pointers(), b->out.data()); }};
  }
  throw std::invalid_argument(fmt::format("unknown kernel '{}' (matmul, conv2d_nhwc_bias_relu, dense_bias_gelu)", kernel));
}

struct Row {
  std::string kernel, policy;
  int trials = 0;
  double best_gflops = 0, wall_seconds = 0;
};

// One policy's run on one kernel from an empty cache, in rounds cut so that each budget ends a
// round; a row at each budget (fewer when the policy runs out of schedules).
std::vector<Row> search(const Kernel& kernel, const std::string& policy, const std::vector<int>& budgets, uint64_t seed, Measurer& measurer,
                        const std::string& cache_dir) {
  std::filesystem::remove_all(cache_dir);
  TuningCache cache(cache_dir);
  TuneOptions options;
  options.trials = budgets.back();
  options.seed = seed;
  options.policy = policy;
  auto start = std::chrono::steady_clock::now();
  TuningTask task(kernel, measurer, cache, options);
  std::vector<Row> rows;
  for (int budget : budgets) {
    while (task.summary().measured < budget) {
      int n = std::min(options.batch_size, budget - task.summary().measured);
      if (task.run_round(n, std::cout) == 0) break;
    }
    const TuneSummary& summary = task.summary();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rows.push_back({kernel.name, policy, summary.measured, summary.best ? bench::gflops(kernel.dag.flop_count(), summary.best->seconds) : 0,
                    wall});
    if (summary.measured < budget) break;
  }
  std::filesystem::remove_all(cache_dir);
  return rows;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<int> budgets = {64, 200, 500, 1000};
  std::vector<std::string> kernels, policies = {"ansor", "ansor-no-crossover", "random"};
  uint64_t seed = 0;
  std::string csv_path;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", flag));
    std::string value = argv[i + 1];
    if (flag == "--trials") {
      budgets.clear();
      for (const std::string& b : split(value)) budgets.push_back(std::stoi(b));
      std::sort(budgets.begin(), budgets.end());
    } else if (flag == "--kernel") {
      kernels.push_back(value);
    } else if (flag == "--policy") {
      policies = split(value);
    } else if (flag == "--seed") {
      seed = std::stoull(value);
    } else if (flag == "--csv") {
      csv_path = value;
    } else {
      throw std::invalid_argument(fmt::format("unknown flag '{}'", flag));
    }
  }
  if (kernels.empty()) kernels = {"matmul", "conv2d_nhwc_bias_relu", "dense_bias_gelu"};

  bench::OneDnn onednn;
  std::map<std::string, Vendor> vendors;
  std::map<std::string, double> vendor_seconds;
  // The vendors are timed before and after the searches and the faster time is kept, so that a
  // noisy minute never flatters the search.
  for (const std::string& name : kernels) {
    vendors.emplace(name, vendor_for(name, onednn));
    vendor_seconds[name] = vendors.at(name).time();
  }

  std::string work_dir = bench::temp_path("search");
  std::unique_ptr<Measurer> measurer = bench::host_measurer(work_dir);
  fmt::print("search on {} ({} threads) with {}\n", measurer->target().to_string(), measurer->target().threads,
             measurer->compiler().identity());
  std::vector<Row> rows;
  for (const std::string& name : kernels) {
    Kernel kernel = bench::load_kernel(bench::kPaperKernels, name);
    for (const std::string& policy : policies) {
      fmt::print("== {} with {}\n", name, policy);
      std::vector<Row> run = search(kernel, policy, budgets, seed, *measurer, work_dir + "-cache");
      rows.insert(rows.end(), run.begin(), run.end());
    }
  }
  for (const std::string& name : kernels) vendor_seconds[name] = std::min(vendor_seconds[name], vendors.at(name).time());

  fmt::print("\n{:<22} {:<19} {:>6} {:>9} {:>10} {:>9} {:>7}\n", "kernel", "policy", "trials", "wall s", "GFLOP/s", "vendor", "ratio");
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "kernel,policy,trials,wall_seconds,best_gflops,vendor,vendor_gflops\n";
  }
  for (const Row& row : rows) {
    double flops = bench::load_kernel(bench::kPaperKernels, row.kernel).dag.flop_count();
    double vendor = bench::gflops(flops, vendor_seconds[row.kernel]);
    fmt::print("{:<22} {:<19} {:>6} {:>9.0f} {:>10.1f} {:>9.1f} {:>6.2f}x  ({})\n", row.kernel, row.policy, row.trials, row.wall_seconds,
               row.best_gflops, vendor, row.best_gflops / vendor, vendors.at(row.kernel).name);
    if (csv.is_open())
      csv << fmt::format("{},{},{},{:.1f},{:.2f},{},{:.2f}\n", row.kernel, row.policy, row.trials, row.wall_seconds, row.best_gflops,
                         vendors.at(row.kernel).name, vendor);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_search: " << e.what() << "\n";
  return 1;
}
