// Search efficiency: each search policy tunes each kernel from an empty cache of its own; at
// every budget of trials, the best GFLOP/s so far and the wall seconds spent (search, building,
// measuring). Then, in this process and with one protocol, each run's final best program (its
// const inputs packed once) is timed again beside the best vendor library for the kernel's kind,
// timed in the same minute: OpenBLAS's sgemm and oneDNN's matmul for a GEMM (weights reordered
// once), oneDNN for the convolution (NHWC, bias and relu post-op) and the dense layer (inner
// product, bias and gelu post-op).
//
//   bench_search [--def FILE] [--kernel NAME]... [--policy P,...] [--trials 64,200,500,1000]
//                [--seed S] [--csv FILE] [--keep-records DIR]
//
// Defaults: the paper kernels of bench_support.h (matmul, conv2d_nhwc_bias_relu, dense_bias_gelu);
// policies ansor, ansor-no-crossover and random. With --def, kernels come from that file; their
// kind (and vendors) follows from their name's prefix (matmul, conv2d_nhwc_bias_relu,
// dense_bias_gelu), their shapes from their inputs. --keep-records keeps each run's records as
// DIR/<kernel>-<policy>/, a cache the cost-model benchmark can read.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "bench_support.h"
#include "onednn_support.h"
#include "records/record_filter.h"
#include "tune/tuner.h"

using namespace ansor;

namespace {

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

std::vector<int64_t> input_shape(const Kernel& kernel, int input) {
  const ComputeDAG& dag = kernel.dag;
  if (input >= static_cast<int>(dag.inputs().size())) throw std::invalid_argument(fmt::format("kernel '{}' has too few inputs", kernel.name));
  return dag.op(dag.inputs()[input]).shape;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The libraries that implement the kernel's kind, on its shapes.
std::vector<Vendor> vendors_for(const Kernel& kernel, bench::OneDnn& d) {
  const std::string& name = kernel.name;
  if (starts_with(name, "matmul")) {
    std::vector<int64_t> a = input_shape(kernel, 0), b = input_shape(kernel, 1);
    const int64_t m = a[0], k = a[1], n = b[1];
    auto buf = std::make_shared<VendorBuffers>(buffers({size_t(m * k), size_t(k * n)}, size_t(m * n)));
    bench::OneDnnTimer onednn = bench::onednn_matmul(d, m, k, n);
    return {{"OpenBLAS",
             [buf, m, k, n] {
               openblas_set_num_threads(ansor_get_num_threads());
               return bench::median_seconds([&] {
                 cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1, buf->inputs[0].data(), int(k),
                             buf->inputs[1].data(), int(n), 0, buf->out.data(), int(n));
               });
             }},
            {"oneDNN", [buf, onednn] { return onednn(buf->pointers(), buf->out.data()); }}};
  }
  if (starts_with(name, "conv2d_nhwc_bias_relu")) {
    std::vector<int64_t> x = input_shape(kernel, 0), w = input_shape(kernel, 1);  // X [N, H, W, C], W [R, S, C, K]
    const int64_t out_elements = x[0] * x[1] * x[2] * w[3];                      // stride 1, "same" padding
    auto buf = std::make_shared<VendorBuffers>(
        buffers({size_t(x[0] * x[1] * x[2] * x[3]), size_t(w[0] * w[1] * w[2] * w[3]), size_t(w[3])}, size_t(out_elements)));
    bench::OneDnnTimer timer = bench::onednn_conv2d_nhwc_bias_relu(d, x[0], x[1], x[2], x[3], w[3], w[0], w[0] / 2);
    return {{"oneDNN", [buf, timer] { return timer(buf->pointers(), buf->out.data()); }}};
  }
  if (starts_with(name, "dense_bias_gelu")) {
    std::vector<int64_t> x = input_shape(kernel, 0), w = input_shape(kernel, 1);  // X [M, K], W [N, K]
    const int64_t m = x[0], k = x[1], n = w[0];
    auto buf = std::make_shared<VendorBuffers>(buffers({size_t(m * k), size_t(n * k), size_t(n)}, size_t(m * n)));
    bench::OneDnnTimer timer = bench::onednn_dense(d, m, k, n, true);
    return {{"oneDNN", [buf, timer] { return timer(buf->pointers(), buf->out.data()); }}};
  }
  throw std::invalid_argument(fmt::format("kernel '{}' is of no kind the benchmark knows (matmul*, conv2d_nhwc_bias_relu*, dense_bias_gelu*)", name));
}

// The fastest of the kernel's vendors now: its name and seconds.
std::pair<std::string, double> best_vendor(const std::vector<Vendor>& vendors) {
  std::pair<std::string, double> best{"", std::numeric_limits<double>::infinity()};
  for (const Vendor& v : vendors) {
    double seconds = v.time();
    if (seconds < best.second) best = {v.name, seconds};
  }
  return best;
}

struct Row {
  std::string kernel, policy;
  int trials = 0;
  double best_gflops = 0, wall_seconds = 0;
};

// One policy's run on one kernel: a row at each budget, and the best program at the end.
struct Run {
  std::string kernel, policy;
  std::vector<Row> rows;
  std::optional<State> best;
};

// One policy's run on one kernel from an empty cache, in rounds cut so that each budget ends a
// round (fewer rows when the policy runs out of schedules). The cache is removed afterwards
// unless keep_records.
Run search(const Kernel& kernel, const std::string& policy, const std::vector<int>& budgets, uint64_t seed, Measurer& measurer,
           const std::string& cache_dir, bool keep_records) {
  std::filesystem::remove_all(cache_dir);
  TuningCache cache(cache_dir);
  TuneOptions options;
  options.trials = budgets.back();
  options.seed = seed;
  options.policy = policy;
  auto start = std::chrono::steady_clock::now();
  TuningTask task(kernel, measurer, cache, options);
  Run run{kernel.name, policy, {}, std::nullopt};
  std::vector<Row>& rows = run.rows;
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
  if (task.summary().best) {
    RecordScope scope{std::make_shared<const ComputeDAG>(kernel.dag), measurer.target().to_string(), measurer.compiler().identity()};
    run.best = check_record(*task.summary().best, scope).state;
  }
  if (!keep_records) std::filesystem::remove_all(cache_dir);
  return run;
}

// The run's best program, built and loaded, timed with its const inputs packed once.
double retime(const Run& run, const std::string& work_dir) {
  bench::LoadedKernel loaded(run.kernel, *run.best, work_dir);
  bench::KernelArguments args(loaded.info());
  const ansor_kernel_info& info = loaded.info();
  return bench::median_seconds([&] { info.call_packed(args.packed_ptrs.data()); });
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<int> budgets = {64, 200, 500, 1000};
  std::vector<std::string> kernels, policies = {"ansor", "ansor-no-crossover", "random"};
  uint64_t seed = 0;
  std::string csv_path, def_text = bench::kPaperKernels, keep_dir;
  bool from_def = false;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", flag));
    std::string value = argv[i + 1];
    if (flag == "--trials") {
      budgets.clear();
      for (const std::string& b : bench::split_list(value)) budgets.push_back(std::stoi(b));
      std::sort(budgets.begin(), budgets.end());
    } else if (flag == "--kernel") {
      kernels.push_back(value);
    } else if (flag == "--def") {
      std::ifstream in(value);
      if (!in) throw std::invalid_argument(fmt::format("cannot read {}", value));
      def_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      from_def = true;
    } else if (flag == "--policy") {
      policies = bench::split_list(value);
    } else if (flag == "--seed") {
      seed = std::stoull(value);
    } else if (flag == "--csv") {
      csv_path = value;
    } else if (flag == "--keep-records") {
      keep_dir = value;
    } else {
      throw std::invalid_argument(fmt::format("unknown flag '{}'", flag));
    }
  }
  if (kernels.empty()) {
    if (from_def) {
      auto file = std::make_shared<SourceFile>();
      file->path = "bench.def";
      file->text = def_text;
      for (const Kernel& k : load_program(file).kernels) kernels.push_back(k.name);
    } else {
      kernels = {"matmul", "conv2d_nhwc_bias_relu", "dense_bias_gelu"};
    }
  }

  bench::OneDnn onednn;
  std::map<std::string, std::vector<Vendor>> vendors;
  for (const std::string& name : kernels) vendors.emplace(name, vendors_for(bench::load_kernel(def_text, name), onednn));

  std::string work_dir = bench::temp_path("search");
  std::unique_ptr<Measurer> measurer = bench::host_measurer(work_dir);
  fmt::print("search on {} ({} threads) with {}\n", measurer->target().to_string(), measurer->target().threads,
             measurer->compiler().identity());
  std::vector<Run> runs;
  for (const std::string& name : kernels) {
    Kernel kernel = bench::load_kernel(def_text, name);
    for (const std::string& policy : policies) {
      fmt::print("== {} with {}\n", name, policy);
      std::string cache_dir = keep_dir.empty() ? work_dir + "-cache" : fmt::format("{}/{}-{}", keep_dir, name, policy);
      runs.push_back(search(kernel, policy, budgets, seed, *measurer, cache_dir, !keep_dir.empty()));
    }
  }

  // Ours and the vendors timed again, kernel by kernel, in the same minute and by one protocol:
  // the search's own measurements ran in a worker process over minutes of changing load.
  std::map<std::string, double> retimed;                             // by kernel and policy
  std::map<std::string, std::pair<std::string, double>> vendor_now;  // by kernel
  for (const std::string& name : kernels) {
    vendor_now[name] = best_vendor(vendors.at(name));
    for (const Run& run : runs)
      if (run.kernel == name && run.best) retimed[name + "/" + run.policy] = retime(run, work_dir + "-retime");
    auto again = best_vendor(vendors.at(name));
    if (again.second < vendor_now[name].second) vendor_now[name] = again;
  }
  std::filesystem::remove_all(work_dir + "-retime");

  fmt::print("\nBest GFLOP/s as the search measured it, at each budget; the vendor is the fastest library, timed after the searches\n");
  fmt::print("{:<28} {:<19} {:>6} {:>9} {:>10} {:>9} {:>7}\n", "kernel", "policy", "trials", "wall s", "GFLOP/s", "vendor", "ratio");
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "kernel,policy,trials,wall_seconds,best_gflops,vendor,vendor_gflops,retimed_gflops\n";
  }
  for (const Run& run : runs) {
    double flops = bench::load_kernel(def_text, run.kernel).dag.flop_count();
    const auto& [vendor_name, vendor_seconds] = vendor_now[run.kernel];
    double vendor = bench::gflops(flops, vendor_seconds);
    for (const Row& row : run.rows) {
      bool last = &row == &run.rows.back();
      auto found = retimed.find(run.kernel + "/" + run.policy);
      double again = last && found != retimed.end() ? bench::gflops(flops, found->second) : 0;
      fmt::print("{:<28} {:<19} {:>6} {:>9.0f} {:>10.1f} {:>9.1f} {:>6.2f}x  ({})\n", row.kernel, row.policy, row.trials, row.wall_seconds,
                 row.best_gflops, vendor, row.best_gflops / vendor, vendor_name);
      if (csv.is_open())
        csv << fmt::format("{},{},{},{:.1f},{:.2f},{},{:.2f},{}\n", row.kernel, row.policy, row.trials, row.wall_seconds, row.best_gflops,
                           vendor_name, vendor, again > 0 ? fmt::format("{:.2f}", again) : "");
    }
  }
  fmt::print("\nEach run's final best, timed again in this process beside the vendor (const inputs packed once on both sides)\n");
  fmt::print("{:<28} {:<19} {:>10} {:>10} {:>9} {:>7}\n", "kernel", "policy", "searched", "re-timed", "vendor", "ratio");
  for (const Run& run : runs) {
    auto found = retimed.find(run.kernel + "/" + run.policy);
    if (found == retimed.end() || run.rows.empty()) continue;
    double flops = bench::load_kernel(def_text, run.kernel).dag.flop_count();
    double again = bench::gflops(flops, found->second), vendor = bench::gflops(flops, vendor_now[run.kernel].second);
    fmt::print("{:<28} {:<19} {:>10.1f} {:>10.1f} {:>9.1f} {:>6.2f}x  ({})\n", run.kernel, run.policy, run.rows.back().best_gflops, again,
               vendor, again / vendor, vendor_now[run.kernel].first);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_search: " << e.what() << "\n";
  return 1;
}
