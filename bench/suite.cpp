// The paper's operator suite (bench/suite.def: Ansor, OSDI'20, section 7) tuned, then timed
// against vendor libraries in one process, by one protocol, on the runtime's threads.
//
//   bench_suite [--trials N | --time-only] [--kernels a,b,...] [--def FILE] [--cache DIR]
//               [--out DIR] [--policy P] [--seed S]
//
// Each kernel is tuned until the cache (default: bench-results/cache) holds N of its measured
// schedules (default 1000): records of earlier runs count, so a larger budget continues a smaller
// one and a repeated run only times (--time-only: whatever the cache holds, no kernel measured).
// Then every kernel is timed: its best program (plain, and with
// const inputs packed once), the naive program, and each library that implements the operator
// (suite_libraries.h), whose output is checked against ours under the project's tolerance.
// Kernels whose arithmetic intensity is below kMemoryBoundIntensity are also reported in GB/s
// against the streaming bandwidth of copies of the same working set (streaming_copy.h).
//
// Written to --out (default bench-results): suite.md (the table, printed too), suite.csv, and
// curves.csv (each kernel's best GFLOP/s after each trial and each second of its tuning, read
// from the records), which bench/plot_suite.py draws. Exit status 1 when a library's output
// differs from ours.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>

#include "bench_support.h"
#include "dag/output_tolerance.h"
#include "records/record_filter.h"
#include "streaming_copy.h"
#include "suite_libraries.h"
#include "tune/search_policy.h"

using namespace ansor;

namespace {

// Below this many FLOPs per byte of arguments a kernel is limited by memory on the machines we
// run on (about 230 GFLOP/s against 30-60 GB/s), so it is judged by GB/s.
constexpr double kMemoryBoundIntensity = 4.0;

struct LibraryTime {
  std::string library, implementation;
  double seconds = 0;
  double max_diff = 0;  // |library - ours|, largest element
  bool agrees = true;
};

struct Row {
  std::string kernel, op;
  double flops = 0, bytes = 0;
  int trials = 0;
  double ours = 0, plain = 0, naive = 0;  // seconds; ours is packed once where there are const inputs
  std::vector<LibraryTime> libraries;
  double stream_gbs = 0;  // memory-bound kernels: the copy bandwidth at this working set

  bool memory_bound() const { return flops / bytes < kMemoryBoundIntensity; }
  const LibraryTime* best_library() const {
    const LibraryTime* best = nullptr;
    for (const LibraryTime& l : libraries)
      if (!best || l.seconds < best->seconds) best = &l;
    return best;
  }
  const LibraryTime* library(const std::string& name) const {
    for (const LibraryTime& l : libraries)
      if (l.library == name) return &l;
    return nullptr;
  }
};

// "c2d" for "c2d_b16": the operator a suite kernel instantiates.
std::string operator_of(const std::string& kernel) {
  size_t at = kernel.rfind("_b");
  return at == std::string::npos ? kernel : kernel.substr(0, at);
}

// The naive program can take seconds per call: one call is enough when it is that slow.
double time_naive(const std::function<void()>& call) {
  auto start = std::chrono::steady_clock::now();
  call();
  double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return first > 0.25 ? first : bench::median_seconds(call);
}

struct CurvePoint {
  int trial;
  int64_t seconds;  // since the kernel's first record
  double best_gflops;
};

// Each kernel's tuning curve from the records of the cache, in the order they were appended.
std::vector<CurvePoint> tuning_curve(const std::vector<Record>& records, const RecordScope& scope, double flops) {
  std::vector<CurvePoint> curve;
  std::optional<int64_t> first;
  double best = 0;
  for (const Record& r : records) {
    if (!check_record(r, scope).usable()) continue;
    if (!first) first = r.timestamp;
    if (r.ok() && r.seconds > 0) best = std::max(best, flops / r.seconds / 1e9);
    curve.push_back({static_cast<int>(curve.size()) + 1, r.timestamp - *first, best});
  }
  return curve;
}

double geomean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return values.empty() ? 0 : std::exp(log_sum / static_cast<double>(values.size()));
}

std::string table(const std::vector<Row>& rows, const std::vector<std::string>& libraries) {
  std::string out = "| kernel | trials | GFLOP | ours ms | ours GFLOP/s | plain call ms | naive ms |";
  std::string rule = "|---|---:|---:|---:|---:|---:|---:|";
  for (const std::string& l : libraries) {
    out += fmt::format(" {} ms |", l);
    rule += "---:|";
  }
  out += " best library | ours / best library (speed) | GB/s (ours) | % of stream |\n";
  out += rule + "---|---:|---:|---:|\n";
  for (const Row& r : rows) {
    out += fmt::format("| {} | {} | {:.3f} | {:.4f} | {:.1f} | {:.4f} | {:.3f} |", r.kernel, r.trials, r.flops / 1e9, r.ours * 1e3,
                       r.flops / r.ours / 1e9, r.plain * 1e3, r.naive * 1e3);
    for (const std::string& l : libraries) {
      const LibraryTime* t = r.library(l);
      out += t ? fmt::format(" {:.4f}{} |", t->seconds * 1e3, t->agrees ? "" : " (differs)") : " — |";
    }
    const LibraryTime* best = r.best_library();
    out += best ? fmt::format(" {} | {:.2f}× |", best->library, best->seconds / r.ours) : " none | — |";
    double gbs = r.bytes / r.ours / 1e9;
    out += r.memory_bound() ? fmt::format(" {:.1f} | {:.0f}% |\n", gbs, 100 * gbs / r.stream_gbs) : " | |\n";
  }
  return out;
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows, const std::vector<std::string>& libraries) {
  std::ofstream out(path);
  out << "kernel,operator,flops,bytes,trials,ours_ms,ours_plain_ms,naive_ms,memory_bound,stream_gbs";
  for (const std::string& l : libraries) out << "," << l << "_ms," << l << "_implementation";
  out << "\n";
  for (const Row& r : rows) {
    out << fmt::format("{},{},{:.0f},{:.0f},{},{:.6f},{:.6f},{:.6f},{},{:.3f}", r.kernel, r.op, r.flops, r.bytes, r.trials, r.ours * 1e3,
                       r.plain * 1e3, r.naive * 1e3, r.memory_bound() ? 1 : 0, r.stream_gbs);
    for (const std::string& l : libraries) {
      const LibraryTime* t = r.library(l);
      out << (t ? fmt::format(",{:.6f},{}", t->seconds * 1e3, t->implementation) : ",,");
    }
    out << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) try {
  TuneOptions tune;
  tune.trials = 1000;
  std::string def_path = ANSOR_BENCH_SOURCE_DIR "/bench/suite.def", cache_dir = "bench-results/cache", out_dir = "bench-results";
  std::vector<std::string> only;
  bool time_only = false;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--time-only") {
      time_only = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", flag));
    std::string value = argv[i + 1];
    if (flag == "--trials") tune.trials = std::stoi(value);
    else if (flag == "--kernels") only = bench::split_list(value);
    else if (flag == "--def") def_path = value;
    else if (flag == "--cache") cache_dir = value;
    else if (flag == "--out") out_dir = value;
    else if (flag == "--policy") tune.policy = value;
    else if (flag == "--seed") tune.seed = std::stoull(value);
    else throw std::invalid_argument(fmt::format("unknown flag '{}'", flag));
  }
  std::vector<std::string> policies = search_policy_names();
  if (std::find(policies.begin(), policies.end(), tune.policy) == policies.end())
    throw std::invalid_argument(fmt::format("unknown search policy '{}'; the policies are: {}", tune.policy, fmt::join(policies, ", ")));

  if (time_only) tune.trials = 0;
  Program program = load_program_file(def_path);
  std::vector<const Kernel*> kernels;
  for (const Kernel& k : program.kernels)
    if (only.empty() || std::find(only.begin(), only.end(), k.name) != only.end()) kernels.push_back(&k);
  for (const std::string& name : only)
    if (!program.find(name)) throw std::invalid_argument(fmt::format("{} has no kernel '{}'", def_path, name));

  std::string work_dir = bench::temp_path("suite");
  std::unique_ptr<Measurer> measurer = bench::host_measurer(work_dir);
  const std::string target = measurer->target().to_string(), compiler = measurer->compiler().identity();
  TuningCache cache(cache_dir);

  // Tuning and building first, timing after, so that no compile of ours runs while anything is timed.
  struct Built {
    std::unique_ptr<bench::LoadedKernel> tuned, naive;
    double tolerance;
  };
  std::vector<Built> built;
  for (const Kernel* k : kernels) {
    State best = bench::tune_to_budget(*k, *measurer, cache, tune);
    built.push_back({std::make_unique<bench::LoadedKernel>(k->name, best, work_dir),
                     std::make_unique<bench::LoadedKernel>(k->name, State(std::make_shared<const ComputeDAG>(k->dag)), work_dir),
                     output_tolerance(k->dag)});
  }
  bench::StreamingCopies copies;
  for (const Built& b : built) {
    const ansor_kernel_info& info = b.tuned->info();
    if (info.flops / bench::argument_bytes(info) < kMemoryBoundIntensity) copies.add(bench::copy_floats(bench::argument_bytes(info)));
  }
  // The copies are the yardstick, not the subject: a few dozen trials find their best, also when
  // this run tunes nothing else.
  TuneOptions copy_tune = tune;
  copy_tune.trials = std::clamp(tune.trials, 32, 64);
  copies.build(*measurer, cache, copy_tune, work_dir);
  measurer.reset();

  std::vector<std::string> libraries;  // the libraries with a column, in the order first met
  std::vector<Row> rows;
  bool all_agree = true;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ansor_kernel_info &tuned = built[i].tuned->info(), &naive = built[i].naive->info();
    bench::KernelArguments args(tuned);
    Row row;
    row.kernel = kernels[i]->name;
    row.op = operator_of(row.kernel);
    row.flops = tuned.flops;
    row.bytes = bench::argument_bytes(tuned);
    fmt::print("timing {}\n", row.kernel);
    row.plain = bench::median_seconds([&] { tuned.call(args.plain_ptrs.data()); });
    row.ours = args.has_const ? bench::median_seconds([&] { tuned.call_packed(args.packed_ptrs.data()); }) : row.plain;
    std::vector<float> ours(args.output().begin(), args.output().end());
    double largest = 0;
    for (float v : ours) largest = std::max(largest, static_cast<double>(std::fabs(v)));
    for (const bench::LibraryRun& run : bench::suite_library_runs(row.op, tuned)) {
      std::vector<float> theirs(ours.size());
      bench::LibraryTiming timing = run.time(args.inputs(), theirs.data());
      LibraryTime t{run.library, timing.implementation, timing.seconds};
      for (size_t j = 0; j < ours.size(); ++j) {
        t.max_diff = std::max(t.max_diff, static_cast<double>(std::fabs(ours[j] - theirs[j])));
        t.agrees = t.agrees && within_output_tolerance(theirs[j], ours[j], built[i].tolerance, largest);
      }
      if (!t.agrees) {
        fmt::print(stderr, "{}: {} and ours differ by up to {:.3e}\n", row.kernel, run.library, t.max_diff);
        all_agree = false;
      }
      if (std::find(libraries.begin(), libraries.end(), run.library) == libraries.end()) libraries.push_back(run.library);
      row.libraries.push_back(t);
    }
    row.naive = time_naive([&] { naive.call(args.plain_ptrs.data()); });
    rows.push_back(row);
  }
  copies.time();
  for (Row& row : rows)
    if (row.memory_bound()) row.stream_gbs = copies.at(bench::copy_floats(row.bytes)).best_gbs();

  // The tuning curves and each kernel's trial count, from the records.
  std::vector<Record> records = cache.load(target).records;
  std::filesystem::create_directories(out_dir);
  std::ofstream curves(std::filesystem::path(out_dir) / "curves.csv");
  curves << "kernel,trial,seconds,best_gflops\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    RecordScope scope{std::make_shared<const ComputeDAG>(kernels[i]->dag), target, compiler};
    std::vector<CurvePoint> curve = tuning_curve(records, scope, rows[i].flops);
    rows[i].trials = static_cast<int>(curve.size());
    for (const CurvePoint& p : curve) curves << fmt::format("{},{},{},{:.3f}\n", rows[i].kernel, p.trial, p.seconds, p.best_gflops);
  }

  // oneDNN's reference implementations ("ref:any") are correct but not meant to be fast: the mean
  // is given with and without them.
  std::vector<double> over_onednn, over_onednn_fast;
  std::string below, implementations;
  for (const Row& r : rows) {
    if (const LibraryTime* t = r.library("oneDNN")) {
      over_onednn.push_back(t->seconds / r.ours);
      if (t->implementation.rfind("ref", 0) != 0) over_onednn_fast.push_back(t->seconds / r.ours);
    }
    for (const LibraryTime& t : r.libraries) implementations += fmt::format("{} {}: {}; ", r.kernel, t.library, t.implementation);
    const LibraryTime* best = r.best_library();
    if (best && best->seconds / r.ours < 0.7) below += fmt::format(" {} ({:.2f}× {})", r.kernel, best->seconds / r.ours, best->library);
    if (r.memory_bound() && r.bytes / r.ours / 1e9 < 0.7 * r.stream_gbs)
      below += fmt::format(" {} ({:.0f}% of stream)", r.kernel, 100 * r.bytes / r.ours / 1e9 / r.stream_gbs);
  }
  std::vector<std::string> found = bench::libraries_found(), missing = bench::libraries_missing();
  // oneDNN's OpenMP threads spin between calls unless told otherwise, which costs whole scheduler
  // ticks on a shared machine: bench/run-suite.sh sets it passive, and the report says which ran.
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::string report = fmt::format(
      "The operator suite on {}, {} threads, kernels built by {}, {} (the trials column is what the cache holds). Libraries: {}.{} "
      "OMP_WAIT_POLICY={}.\n"
      "Medians of one call; ours is packed once where the kernel has const inputs. Kernels below {} FLOP per byte of arguments are "
      "memory-bound: GB/s counts every argument once, against the best streaming copy of the same working set.\n\n{}\n"
      "Geometric mean of our speed over oneDNN's: {:.2f}× over {} kernels; {:.2f}× over the {} where oneDNN has more than a reference "
      "implementation. Below 0.7× the best library or 70% of stream:{}\n\nLibrary implementations: {}\n\n"
      "Streaming copies (working set = bytes read + written):\n\n{}",
      target, ansor_get_num_threads(), compiler,
      time_only ? std::string("timing the cache's best schedules")
                : fmt::format("tuned to {} trials of the {} policy per kernel (seed {})", tune.trials, tune.policy, tune.seed),
      found.empty() ? "none" : fmt::format("{}", fmt::join(found, ", ")),
      missing.empty() ? "" : fmt::format(" Missing: {}.", fmt::join(missing, "; ")), wait_policy ? wait_policy : "unset",
      kMemoryBoundIntensity, table(rows, libraries),
      geomean(over_onednn), over_onednn.size(), geomean(over_onednn_fast), over_onednn_fast.size(), below.empty() ? " none" : below,
      implementations.empty() ? "none" : implementations.substr(0, implementations.size() - 2), copies.table());
  fmt::print("\n{}", report);
  std::ofstream(std::filesystem::path(out_dir) / "suite.md") << report;
  write_csv(std::filesystem::path(out_dir) / "suite.csv", rows, libraries);
  std::filesystem::remove_all(work_dir);
  return all_agree ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "bench_suite: " << e.what() << "\n";
  return 2;
}
