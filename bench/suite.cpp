// The paper's operator suite (bench/suite.def: Ansor, OSDI'20, section 7) tuned, then timed
// against vendor libraries in one process, by one protocol, on the runtime's threads.
//
//   bench_suite [--trials N | --time-only] [--kernels a,b,...] [--def FILE] [--cache DIR]
//               [--out DIR] [--policy P] [--seed S] [--target CPU]
//
// Our kernels are built for the host (-march=native), or with --target for a named CPU
// (alderlake: AVX2 with AVX-VNNI); the libraries are then to be held to that CPU's instructions
// too (ONEDNN_MAX_CPU_ISA, OPENBLAS_CORETYPE), which the protocol's notes say.
//
// Each kernel is tuned until the cache (default: bench-results/cache) holds N of its measured
// schedules (default 1000): records of earlier runs count, so a larger budget continues a smaller
// one and a repeated run only times (--time-only: whatever the cache holds, no kernel measured).
// Then every kernel is timed by the benchmarks' protocol (protocol.h, bench/README.md): its best
// program with const inputs packed once, interleaved over rounds with each library that
// implements the operator (suite_libraries.h; layouts of the library's choosing, its plain-I/O
// call and its reorders beside), then the same at one thread; its output checked against ours
// under the project's tolerance; our plain call and the naive program after.
// Kernels whose arithmetic intensity is below kMemoryBoundIntensity are also reported in GB/s
// against the streaming bandwidth of copies of the same working set (streaming_copy.h).
// Arguments may be f32, or bf16, u8 and i8 (bench/lowp.def, against oneDNN's bf16 and int8
// primitives); an integer kernel's GFLOP/s counts its integer multiplies and adds.
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

struct Row {
  std::string kernel, op;
  double flops = 0, bytes = 0;
  int trials = 0;
  bench::Spread ours;                            // packed once where there are const inputs
  std::optional<bench::Spread> ours_one_thread;
  double plain = 0, naive = 0;                   // seconds: our plain call (packing per call), the naive program
  std::vector<bench::LibraryRow> libraries;
  double stream_gbs = 0;  // memory-bound kernels: the copy bandwidth at this working set

  bool memory_bound() const { return flops / bytes < kMemoryBoundIntensity; }
  const bench::LibraryRow* library(const std::string& name) const {
    for (const bench::LibraryRow& l : libraries)
      if (l.library == name) return &l;
    return nullptr;
  }
  // Our speed over the fastest native library, at the run's threads and at one.
  std::optional<double> speed() const {
    const bench::LibraryRow* best = bench::best_reported(libraries);
    if (!best) return std::nullopt;
    return *best->reported_seconds() / ours.median;
  }
  // The fastest native library at one thread.
  const bench::LibraryRow* best_one_thread() const {
    const bench::LibraryRow* best = nullptr;
    for (const bench::LibraryRow& l : libraries)
      if (l.reported_seconds() && l.one_thread && (!best || l.one_thread->median < best->one_thread->median)) best = &l;
    return best;
  }
  std::optional<double> speed_one_thread() const {
    const bench::LibraryRow* best = best_one_thread();
    if (!best || !ours_one_thread) return std::nullopt;
    return best->one_thread->median / ours_one_thread->median;
  }
};

// The operator a kernel instantiates: "c2d" for the suite's "c2d_b16" (a batch suffix), "dense"
// for bench/shapes.def's "dense_bertbase_128x768x2304" (<operator>_<network>_<shape>).
std::string operator_of(const std::string& kernel) {
  size_t at = kernel.rfind("_b");
  if (at != std::string::npos && at + 2 < kernel.size() &&
      std::all_of(kernel.begin() + static_cast<std::ptrdiff_t>(at) + 2, kernel.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return kernel.substr(0, at);
  return kernel.substr(0, kernel.find('_'));
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

// Each kernel's tuning curve from the records of the cache, in the order they were appended: its
// trials, at the best single measurement so far (what the search saw); the confirmations of
// the fastest schedules are no trials.
std::vector<CurvePoint> tuning_curve(const std::vector<Record>& records, const RecordScope& scope, double flops) {
  std::vector<CurvePoint> curve;
  std::optional<int64_t> first;
  double best = 0;
  for (const Record& r : records) {
    if (r.remeasure || !check_record(r, scope).usable()) continue;
    if (!first) first = r.timestamp;
    if (r.ok() && r.seconds > 0) best = std::max(best, flops / r.seconds / 1e9);
    curve.push_back({static_cast<int>(curve.size()) + 1, r.timestamp - *first, best});
  }
  return curve;
}

std::string speed_cell(std::optional<double> speed) { return speed ? fmt::format("{:.2f}×", *speed) : "—"; }

std::string table(const std::vector<Row>& rows, const std::vector<std::string>& libraries) {
  std::string out = "| kernel | trials | ours ms [min–max] | GFLOP/s |";
  std::string rule = "|---|---:|---:|---:|";
  for (const std::string& l : libraries) {
    out += fmt::format(" {} ms [min–max] |", l);
    rule += "---:|";
  }
  out += " speed vs best library |";
  rule += "---:|";
  for (const std::string& l : libraries) {
    out += fmt::format(" {0} plain I/O ms | {0} reorders ms |", l);
    rule += "---:|---:|";
  }
  out += " 1 thread: ours ms | 1 thread: best library ms | 1 thread: speed | our plain call ms | naive ms | GB/s (ours) | % of stream |\n";
  out += rule + "---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    out += fmt::format("| {} | {} | {} | {:.1f} |", r.kernel, r.trials, bench::format_ms(r.ours), r.flops / r.ours.median / 1e9);
    for (const std::string& l : libraries) {
      const bench::LibraryRow* t = r.library(l);
      out += t ? fmt::format(" {}{} |", bench::library_cell(*t), t->agrees ? "" : " (differs)") : " — |";
    }
    out += fmt::format(" {} |", speed_cell(r.speed()));
    for (const std::string& l : libraries) {
      const bench::LibraryRow* t = r.library(l);
      out += t && t->plain_io ? fmt::format(" {} | {} |", bench::format_ms(t->plain_io->median), bench::format_ms(t->reorders->median)) : " — | — |";
    }
    const bench::LibraryRow* best_one = r.best_one_thread();
    out += fmt::format(" {} | {} | {} | {} | {} |", r.ours_one_thread ? bench::format_ms(r.ours_one_thread->median) : "—",
                       best_one ? fmt::format("{} ({})", bench::format_ms(best_one->one_thread->median), best_one->library) : "—",
                       speed_cell(r.speed_one_thread()), bench::format_ms(r.plain), bench::format_ms(r.naive));
    double gbs = r.bytes / r.ours.median / 1e9;
    out += r.memory_bound() ? fmt::format(" {:.1f} | {:.0f}% |\n", gbs, 100 * gbs / r.stream_gbs) : " | |\n";
  }
  return out;
}

// A CSV field: quoted, as implementation names and layouts hold commas.
std::string quoted(const std::string& text) { return "\"" + text + "\""; }

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows, const std::vector<std::string>& libraries) {
  std::ofstream out(path);
  out << "kernel,operator,flops,bytes,trials,ours_ms,ours_min_ms,ours_max_ms,ours_one_thread_ms,ours_plain_ms,naive_ms,memory_bound,"
         "stream_gbs";
  for (const std::string& l : libraries)
    out << fmt::format(",{0}_ms,{0}_min_ms,{0}_max_ms,{0}_plain_io_ms,{0}_reorders_ms,{0}_one_thread_ms,{0}_implementation,{0}_native,"
                       "{0}_layouts",
                       l);
  out << "\n";
  auto value = [](std::optional<double> seconds) { return seconds ? fmt::format("{:.6f}", *seconds * 1e3) : std::string(); };
  for (const Row& r : rows) {
    out << fmt::format("{},{},{:.0f},{:.0f},{},{:.6f},{:.6f},{:.6f},{},{:.6f},{:.6f},{},{:.3f}", r.kernel, r.op, r.flops, r.bytes, r.trials,
                       r.ours.median * 1e3, r.ours.min * 1e3, r.ours.max * 1e3,
                       value(r.ours_one_thread ? std::optional(r.ours_one_thread->median) : std::nullopt), r.plain * 1e3, r.naive * 1e3,
                       r.memory_bound() ? 1 : 0, r.stream_gbs);
    for (const std::string& l : libraries) {
      const bench::LibraryRow* t = r.library(l);
      if (!t) {
        out << ",,,,,,,,,";
        continue;
      }
      // The time columns hold only what stands for the library's speed; a reference or fallback
      // implementation is named, with its native flag 0, and its times left empty.
      const bool native = t->reported_seconds().has_value();
      auto when_native = [&](std::optional<bench::Spread> s, double bench::Spread::*field) {
        return native && s ? value((*s).*field) : std::string();
      };
      out << fmt::format(",{},{},{},{},{},{},{},{},{}", when_native(t->time, &bench::Spread::median), when_native(t->time, &bench::Spread::min),
                         when_native(t->time, &bench::Spread::max), when_native(t->plain_io, &bench::Spread::median),
                         when_native(t->reorders, &bench::Spread::median), when_native(t->one_thread, &bench::Spread::median),
                         quoted(t->implementation), native ? 1 : 0, quoted(t->layouts));
    }
    out << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) try {
  bench::enter_protocol_environment(argv);
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
    else if (flag == "--target") bench::build_kernels_for_cpu(value);
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

  // Every runtime at the tuning target's thread count, from here on.
  const int threads = measurer->target().threads;
  measurer.reset();
  bench::set_all_threads(threads);
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
    auto ours = [&] { args.has_const ? tuned.call_packed(args.packed_ptrs.data()) : tuned.call(args.plain_ptrs.data()); };
    ours();
    const ansor_tensor_info& output = tuned.args[tuned.num_args - 1];  // the last argument: these kernels have one output
    bench::Comparison compared = bench::compare_with_libraries(ours, bench::suite_libraries(row.op, tuned), args.inputs(), args.output_bytes(),
                                                               bench::output_checker(output, args.output(), built[i].tolerance), threads, true);
    row.ours = compared.ours;
    row.ours_one_thread = compared.ours_one_thread;
    row.libraries = std::move(compared.libraries);
    for (const bench::LibraryRow& t : row.libraries) {
      if (!t.agrees) {
        fmt::print(stderr, "{}: {} and ours differ by up to {:.3e}\n", row.kernel, t.library, t.max_diff);
        all_agree = false;
      }
      if (std::find(libraries.begin(), libraries.end(), t.library) == libraries.end()) libraries.push_back(t.library);
    }
    row.plain = bench::median_seconds([&] { tuned.call(args.plain_ptrs.data()); });
    row.naive = time_naive([&] { naive.call(args.plain_ptrs.data()); });
    rows.push_back(std::move(row));
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

  // Means over the operators where a library has a native implementation: a reference or
  // fallback implementation never stands for the library's speed (protocol.h).
  std::vector<double> over_best, over_best_one_thread, over_onednn, over_best_plain_io;
  std::string below, implementations, no_native;
  for (const Row& r : rows) {
    if (auto speed = r.speed()) over_best.push_back(*speed);
    if (auto speed = r.speed_one_thread()) over_best_one_thread.push_back(*speed);
    if (const bench::LibraryRow* t = r.library("oneDNN"); t && t->reported_seconds()) over_onednn.push_back(*t->reported_seconds() / r.ours.median);
    // The plain-I/O reading: each library from row-major buffers, reorders inside its call.
    double best_plain = 0;
    for (const bench::LibraryRow& t : r.libraries)
      if (t.reported_seconds()) {
        double seconds = t.plain_io ? t.plain_io->median : t.time.median;
        best_plain = best_plain == 0 ? seconds : std::min(best_plain, seconds);
      }
    if (best_plain > 0) over_best_plain_io.push_back(best_plain / r.ours.median);
    for (const bench::LibraryRow& t : r.libraries) {
      implementations += fmt::format("\n- {} {}: {}{}; largest |difference| from ours {:.3g}", r.kernel, t.library, t.implementation,
                                     t.layouts.empty() ? "" : fmt::format(" (layouts: {})", t.layouts), t.max_diff);
      if (!t.non_native.empty()) no_native += fmt::format("\n- {} {}: {}", r.kernel, t.library, t.non_native);
    }
    if (auto speed = r.speed(); speed && *speed < 1.0)
      below += fmt::format(" {} ({:.2f}× {})", r.kernel, *speed, bench::best_reported(r.libraries)->library);
    if (r.memory_bound() && r.bytes / r.ours.median / 1e9 < 0.7 * r.stream_gbs)
      below += fmt::format(" {} ({:.0f}% of stream)", r.kernel, 100 * r.bytes / r.ours.median / 1e9 / r.stream_gbs);
  }
  std::string parallel_costs;
  for (const bench::ParallelCallCost& c : bench::empty_parallel_call_costs())
    parallel_costs += fmt::format("{}{}: {:.2f} µs back to back, {:.1f} µs after 5 ms idle", parallel_costs.empty() ? "" : "; ", c.runtime,
                                  c.back_to_back_seconds * 1e6, c.after_idle_seconds * 1e6);
  std::vector<std::string> found = bench::libraries_found(), missing = bench::libraries_missing();
  std::string report = fmt::format(
      "The operator suite on {}, {} threads on every side, kernels built by {}, {} (the trials column is what the cache holds). "
      "Libraries: {}.{}\n\n"
      "Protocol (bench/README.md): ours (const inputs packed once) and each library interleaved over {} rounds, the median of the "
      "rounds' medians with the fastest and slowest round; libraries in the layouts they choose (`any`), inputs and weights reordered "
      "once outside the timing, their per-call reorders and a plain-I/O call (reorders inside) beside; then the same at 1 thread. "
      "{}. An empty parallel call costs {}. Kernels below {} FLOP per byte of arguments are memory-bound: GB/s counts every argument "
      "once, against the best streaming copy of the same working set.\n\n{}\n"
      "Geometric mean of our speed over the best library with a native implementation: **{:.2f}×** over {} kernels (over oneDNN: "
      "{:.2f}× over {}); from row-major buffers (libraries' plain-I/O calls): {:.2f}×; at 1 thread: {:.2f}× over {}. Below 1.0× the "
      "best library or 70% of stream:{}\n\n"
      "Implementations:{}\n\nNot counted as a library's speed:{}\n\nStreaming copies (working set = bytes read + written):\n\n{}",
      target, threads, compiler,
      time_only ? std::string("timing the cache's best schedules")
                : fmt::format("tuned to {} trials of the {} policy per kernel (seed {})", tune.trials, tune.policy, tune.seed),
      found.empty() ? "none" : fmt::format("{}", fmt::join(found, ", ")),
      missing.empty() ? "" : fmt::format(" Missing: {}.", fmt::join(missing, "; ")), bench::kRounds, bench::wait_policy_description(),
      parallel_costs, kMemoryBoundIntensity, table(rows, libraries), bench::geomean(over_best), over_best.size(),
      bench::geomean(over_onednn), over_onednn.size(), bench::geomean(over_best_plain_io), bench::geomean(over_best_one_thread),
      over_best_one_thread.size(), below.empty() ? " none" : below, implementations.empty() ? " none" : implementations,
      no_native.empty() ? " none" : no_native, copies.table());
  fmt::print("\n{}", report);
  std::ofstream(std::filesystem::path(out_dir) / "suite.md") << report;
  write_csv(std::filesystem::path(out_dir) / "suite.csv", rows, libraries);
  std::filesystem::remove_all(work_dir);
  return all_agree ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "bench_suite: " << e.what() << "\n";
  return 2;
}
