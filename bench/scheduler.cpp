// The task scheduler on a network: the kernels of a kernels.def with a network (default: the
// ResNet-50 layers of bench/resnet50.def) tuned from an empty cache under one total budget by
// each scheduling strategy, then every kernel's best program of each strategy, and its default
// schedule, timed in this process by the benchmarks' protocol (protocol.h: const inputs packed
// once, interleaved over rounds), kernel by kernel so that the strategies meet the same minutes
// of load; the network's weighted latency Σ count × time for each.
//
//   bench_scheduler [--def FILE] [--total-trials N] [--strategy gradient,round-robin] [--seed S]
//                   [--keep-records DIR] [--csv FILE]
//
// Defaults: bench/resnet50.def, 40 trials per kernel in all, both strategies.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>

#include "bench_support.h"
#include "driver/scheduled_tuning.h"
#include "measure/host_target.h"
#include "sampler/default_schedule.h"

using namespace ansor;

namespace {

// Seconds of one call of each of the kernel's states, with const inputs packed once, timed by the
// protocol: interleaved over rounds, on the same arguments.
std::vector<double> time_states(const Kernel& kernel, const std::vector<State>& states, const std::string& work_dir) {
  std::vector<std::unique_ptr<bench::LoadedKernel>> loaded;
  for (const State& s : states) loaded.push_back(std::make_unique<bench::LoadedKernel>(kernel.name, s, work_dir));
  std::vector<std::function<void()>> calls;
  std::vector<bench::KernelArguments> packed;
  packed.reserve(loaded.size());
  for (const auto& l : loaded) {
    packed.emplace_back(l->info());  // each schedule packs its const inputs its own way
    const ansor_kernel_info& info = l->info();
    void** pointers = packed.back().packed_ptrs.data();
    calls.push_back([&info, pointers] { info.call_packed(pointers); });
  }
  std::vector<double> seconds;
  for (const bench::Spread& s : bench::interleaved(calls)) seconds.push_back(s.median);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) try {
  bench::enter_protocol_environment(argv);
  std::string def_path = ANSOR_BENCH_SOURCE_DIR "/bench/resnet50.def", keep_dir, csv_path;
  std::vector<std::string> strategies = {"gradient", "round-robin"};
  int total_trials = -1;
  uint64_t seed = 0;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", flag));
    std::string value = argv[i + 1];
    if (flag == "--def") def_path = value;
    else if (flag == "--total-trials") total_trials = std::stoi(value);
    else if (flag == "--strategy") strategies = bench::split_list(value);
    else if (flag == "--seed") seed = std::stoull(value);
    else if (flag == "--keep-records") keep_dir = value;
    else if (flag == "--csv") csv_path = value;
    else throw std::invalid_argument(fmt::format("unknown flag '{}'", flag));
  }
  Program program = load_program_file(def_path);
  if (total_trials < 0) total_trials = 40 * static_cast<int>(program.kernels.size());
  std::map<std::string, double> counts;  // per kernel: runs per inference, as the scheduler weighs it
  // The schedulers' sessions run candidates in the benchmarks' worker.
  ::setenv("ANSOR_MEASURE_WORKER", ANSOR_BENCH_WORKER, 0);

  std::string work_dir = bench::temp_path("scheduler");
  std::map<std::string, std::map<std::string, State>> best;  // strategy -> kernel -> best schedule
  std::map<std::string, double> tuning_seconds;
  for (const std::string& strategy : strategies) {
    std::string cache_dir = keep_dir.empty() ? work_dir + "-cache-" + strategy : keep_dir + "/" + strategy;
    std::filesystem::remove_all(cache_dir);
    SessionOptions session;
    session.cache_dir = cache_dir;
    session.work_dir = work_dir + "-measure";
    ScheduledTuningOptions options;
    options.tune.seed = seed;
    options.total_trials = total_trials;
    if (strategy == "round-robin") options.scheduler.strategy = SchedulingStrategy::RoundRobin;
    else if (strategy != "gradient") throw std::invalid_argument(fmt::format("unknown strategy '{}' (gradient, round-robin)", strategy));
    fmt::print("== {} scheduler, {} trials for {} kernels\n", strategy, total_trials, program.kernels.size());
    auto start = std::chrono::steady_clock::now();
    {
      TuningSessions sessions(session);
      std::vector<ScheduledKernel> rows = tune_scheduled(program, sessions, options, std::cout);
      print_scheduled_summary(rows, std::cout);
      for (const ScheduledKernel& row : rows) counts[row.name] = row.weight;
      tuning_seconds[strategy] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (const Kernel& k : program.kernels) {
        std::vector<std::string> notes;
        std::vector<ReplayedRecord> found = sessions.for_kernel(k).best(k, 1, notes);
        if (!found.empty()) best[strategy].emplace(k.name, found.front().state);
      }
    }
    if (keep_dir.empty()) std::filesystem::remove_all(cache_dir);
  }

  // Every kernel's programs timed side by side: the default schedule, then each strategy's best.
  fmt::print("\n{:<26} {:>6} {:>12}", "kernel", "count", "default ms");
  for (const std::string& s : strategies) fmt::print(" {:>14}", s + " ms");
  fmt::print("\n");
  std::map<std::string, double> latency;  // strategy (and "default") -> Σ count × seconds
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "kernel,count,default_seconds";
    for (const std::string& s : strategies) csv << "," << s << "_seconds";
    csv << "\n";
  }
  const SamplerContext host = SamplerContext::for_cpu(detect_host(make_kernel_compiler()));
  for (const Kernel& k : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(k.dag);
    double count = counts[k.name];
    std::vector<State> states = {default_schedule(dag, host)};
    for (const std::string& s : strategies) {
      auto found = best[s].find(k.name);
      states.push_back(found == best[s].end() ? states.front() : found->second);
    }
    std::vector<double> seconds = time_states(k, states, work_dir + "-time");
    latency["default"] += count * seconds[0];
    fmt::print("{:<26} {:>6.3g} {:>12.3f}", k.name, count, seconds[0] * 1e3);
    if (csv.is_open()) csv << fmt::format("{},{},{:.6g}", k.name, count, seconds[0]);
    for (size_t i = 0; i < strategies.size(); ++i) {
      latency[strategies[i]] += count * seconds[i + 1];
      fmt::print(" {:>14.3f}", seconds[i + 1] * 1e3);
      if (csv.is_open()) csv << fmt::format(",{:.6g}", seconds[i + 1]);
    }
    fmt::print("\n");
    if (csv.is_open()) csv << "\n";
  }
  std::filesystem::remove_all(work_dir + "-time");
  fmt::print("\nweighted end-to-end latency (Σ count × time of one call): default schedules {:.3f} ms\n", latency["default"] * 1e3);
  for (const std::string& s : strategies)
    fmt::print("  {:<12} {:>9.3f} ms ({:.2f}x the default schedules), {} trials in {:.0f} s\n", s, latency[s] * 1e3,
               latency["default"] / latency[s], total_trials, tuning_seconds[s]);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_scheduler: " << e.what() << "\n";
  return 1;
}
