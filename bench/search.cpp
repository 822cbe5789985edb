// Search efficiency: each search policy tunes each kernel from an empty cache of its own; at
// every budget of trials, the best GFLOP/s so far and the wall seconds spent (search, building,
// measuring). Then, in this process and by the benchmarks' protocol (protocol.h), each run's
// final best program (its const inputs packed once) is timed again, interleaved with the vendor
// libraries for the kernel's kind on the same buffers: OpenBLAS's sgemm and oneDNN's matmul for a
// GEMM, oneDNN for the convolution (bias and relu post-op) and the dense layer (inner product,
// bias and gelu post-op), each in the layouts it chooses, weights reordered once.
//
//   bench_search [--def FILE] [--kernel NAME]... [--policy P,...] [--trials 64,200,500,1000]
//                [--seed S] [--csv FILE] [--keep-records DIR]
//
// Defaults: the paper kernels of bench_support.h (matmul, conv2d_nhwc_bias_relu, dense_bias_gelu);
// policies ansor, ansor-no-crossover and random. With --def, kernels come from that file; their
// kind (and vendors) follows from their name's prefix (matmul, conv2d_nhwc_bias_relu,
// dense_bias_gelu), their shapes from their inputs. --keep-records keeps each run's records as
// DIR/<kernel>-<policy>/, a cache the cost-model benchmark can read.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
#include "dag/output_tolerance.h"
#include "onednn_support.h"
#include "openblas_support.h"
#include "records/record_filter.h"
#include "tune/tuner.h"

using namespace ansor;

namespace {

std::vector<int64_t> input_shape(const Kernel& kernel, int input) {
  const ComputeDAG& dag = kernel.dag;
  if (input >= static_cast<int>(dag.inputs().size())) throw std::invalid_argument(fmt::format("kernel '{}' has too few inputs", kernel.name));
  return dag.op(dag.inputs()[input]).shape;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The libraries that implement the kernel's kind, on its shapes, called by the protocol.
std::vector<bench::NamedPreparer> vendors_for(const Kernel& kernel) {
  using dnnl::memory;
  const std::string& name = kernel.name;
  if (starts_with(name, "matmul")) {
    std::vector<int64_t> a = input_shape(kernel, 0), b = input_shape(kernel, 1);
    return {{"OpenBLAS", bench::openblas_gemm(1, a[0], a[1], b[1])}, {"oneDNN", bench::onednn_matmul(1, a[0], a[1], b[1], true)}};
  }
  if (starts_with(name, "conv2d_nhwc_bias_relu")) {
    std::vector<int64_t> x = input_shape(kernel, 0), w = input_shape(kernel, 1);  // X [N, H, W, C], W [R, S, C, K]; stride 1, "same" padding
    auto tagged = [](const memory::dims& dims, memory::format_tag tag) { return memory::desc(dims, memory::data_type::f32, tag); };
    bench::ConvolutionSpec spec{tagged({x[0], x[3], x[1], x[2]}, memory::format_tag::nhwc), tagged({w[3], w[2], w[0], w[1]}, memory::format_tag::hwio),
                                tagged({x[0], w[3], x[1], x[2]}, memory::format_tag::nhwc), {1, 1}, {0, 0}, {w[0] / 2, w[0] / 2}};
    spec.bias = true;
    spec.relu = true;
    return {{"oneDNN", bench::onednn_convolution(spec)}};
  }
  if (starts_with(name, "dense_bias_gelu")) {
    std::vector<int64_t> x = input_shape(kernel, 0), w = input_shape(kernel, 1);  // X [M, K], W [N, K]
    return {{"oneDNN", bench::onednn_dense(x[0], x[1], w[0], bench::DenseEpilogue::BiasGelu)}};
  }
  throw std::invalid_argument(fmt::format("kernel '{}' is of no kind the benchmark knows (matmul*, conv2d_nhwc_bias_relu*, dense_bias_gelu*)", name));
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
  TuningTask task(kernel.name, std::make_shared<const ComputeDAG>(kernel.dag), measurer, cache, options);
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

// What re-timing found for one run's final best: ours and the fastest native library, timed
// together by the protocol.
struct Retimed {
  double ours = 0, vendor = 0;
  std::string vendor_name;
};

// The run's best program, built and loaded, timed with its const inputs packed once beside the
// kernel's libraries on the same buffers (protocol.h), whose outputs are checked against ours.
Retimed retime(const Run& run, const Kernel& kernel, int threads, const std::string& work_dir) {
  bench::LoadedKernel loaded(run.kernel, *run.best, work_dir);
  bench::KernelArguments args(loaded.info());
  const ansor_kernel_info& info = loaded.info();
  auto ours = [&] { info.call_packed(args.packed_ptrs.data()); };
  ours();
  const ansor_tensor_info& output = info.args[info.num_args - 1];  // the last argument: these kernels have one output
  bench::Comparison compared = bench::compare_with_libraries(ours, vendors_for(kernel), args.inputs(), args.output_bytes(),
                                                             bench::output_checker(output, args.output(), output_tolerance(kernel.dag)), threads, false);
  for (const bench::LibraryRow& l : compared.libraries) {
    if (!l.agrees) throw std::runtime_error(fmt::format("{}: {} and ours differ by up to {:.3e}", run.kernel, l.library, l.max_diff));
    fmt::print("{} {}: {} ({})\n", run.kernel, l.library, bench::library_cell(l), l.implementation);
  }
  const bench::LibraryRow* best = bench::best_reported(compared.libraries);
  if (!best) throw std::runtime_error(fmt::format("{}: no library has a native implementation", run.kernel));
  return {compared.ours.median, *best->reported_seconds(), best->library};
}

}  // namespace

int main(int argc, char** argv) try {
  bench::enter_protocol_environment(argv);
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

  for (const std::string& name : kernels) vendors_for(bench::load_kernel(def_text, name));  // an unknown kind fails before any tuning

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
      // A measurer of its own: a measurer copies the measurements of programs it measured before,
      // and each run starts from nothing.
      std::unique_ptr<Measurer> run_measurer = bench::host_measurer(work_dir);
      runs.push_back(search(kernel, policy, budgets, seed, *run_measurer, cache_dir, !keep_dir.empty()));
    }
  }

  // Each run's final best timed again beside the libraries, by the protocol: the search's own
  // measurements ran in a worker process over minutes of changing load.
  const int threads = measurer->target().threads;
  measurer.reset();
  bench::set_all_threads(threads);
  std::map<std::string, Retimed> retimed;  // by kernel and policy
  for (const Run& run : runs)
    if (run.best) retimed[run.kernel + "/" + run.policy] = retime(run, bench::load_kernel(def_text, run.kernel), threads, work_dir + "-retime");
  std::filesystem::remove_all(work_dir + "-retime");

  fmt::print("\n{}\n\nBest GFLOP/s as the search measured it, at each budget; the vendor is the fastest native library, timed by the "
             "protocol beside the run's final best\n",
             bench::wait_policy_description());
  fmt::print("{:<28} {:<19} {:>6} {:>9} {:>10} {:>9} {:>7}\n", "kernel", "policy", "trials", "wall s", "GFLOP/s", "vendor", "ratio");
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "kernel,policy,trials,wall_seconds,best_gflops,vendor,vendor_gflops,retimed_gflops\n";
  }
  for (const Run& run : runs) {
    auto found = retimed.find(run.kernel + "/" + run.policy);
    if (found == retimed.end()) continue;
    const Retimed& again = found->second;
    double flops = bench::load_kernel(def_text, run.kernel).dag.flop_count();
    double vendor = bench::gflops(flops, again.vendor);
    for (const Row& row : run.rows) {
      bool last = &row == &run.rows.back();
      fmt::print("{:<28} {:<19} {:>6} {:>9.0f} {:>10.1f} {:>9.1f} {:>6.2f}x  ({})\n", row.kernel, row.policy, row.trials, row.wall_seconds,
                 row.best_gflops, vendor, row.best_gflops / vendor, again.vendor_name);
      if (csv.is_open())
        csv << fmt::format("{},{},{},{:.1f},{:.2f},{},{:.2f},{}\n", row.kernel, row.policy, row.trials, row.wall_seconds, row.best_gflops,
                           again.vendor_name, vendor, last ? fmt::format("{:.2f}", bench::gflops(flops, again.ours)) : "");
    }
  }
  fmt::print("\nEach run's final best, timed again in this process beside the vendor (const inputs packed once on both sides)\n");
  fmt::print("{:<28} {:<19} {:>10} {:>10} {:>9} {:>7}\n", "kernel", "policy", "searched", "re-timed", "vendor", "ratio");
  for (const Run& run : runs) {
    auto found = retimed.find(run.kernel + "/" + run.policy);
    if (found == retimed.end() || run.rows.empty()) continue;
    double flops = bench::load_kernel(def_text, run.kernel).dag.flop_count();
    double again = bench::gflops(flops, found->second.ours), vendor = bench::gflops(flops, found->second.vendor);
    fmt::print("{:<28} {:<19} {:>10.1f} {:>10.1f} {:>9.1f} {:>6.2f}x  ({})\n", run.kernel, run.policy, run.rows.back().best_gflops, again,
               vendor, again / vendor, found->second.vendor_name);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_search: " << e.what() << "\n";
  return 1;
}
