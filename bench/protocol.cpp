// The benchmarks' protocol: matched thread waiting, one thread count, interleaved rounds, and the
// rule that only a library's own implementations stand for its speed.
#include "protocol.h"

#include "measure/aligned_buffer.h"

#include <ansor/runtime.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#if ANSOR_BENCH_OPENMP
#include <omp.h>
#endif
#if ANSOR_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace ansor::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The fastest of a few timings of `n` repetitions of `step`, per repetition: the cost of the
// instruction itself, not of whatever interrupted one timing.
template <class Step>
double seconds_per_step(int n, Step step) {
  double best = 1e30;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto start = Clock::now();
    for (int i = 0; i < n; ++i) step();
    best = std::min(best, seconds_since(start) / n);
  }
  return best;
}

// What ansor's pool and libgomp execute once per poll.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Ticks per second of the cycle counter OpenBLAS counts its spin in: the TSC on x86; none known
// elsewhere, where OpenBLAS keeps its own spin.
std::optional<double> cycle_counter_hz() {
#if defined(__x86_64__) || defined(__i386__)
  auto start = Clock::now();
  uint64_t first = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return static_cast<double>(__rdtsc() - first) / seconds_since(start);
#else
  return std::nullopt;
#endif
}

constexpr const char* kProtocolMarker = "ANSOR_BENCH_PROTOCOL";
constexpr const char* kSpinSecondsVariable = "ANSOR_BENCH_SPIN_SECONDS";

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

void empty_chunk(int64_t, int64_t, void*) {}

// The median of `samples` timings of one call, each made after `idle` with no call at all.
double median_call_seconds(const std::function<void()>& call, int samples, std::chrono::microseconds idle) {
  std::vector<double> times;
  call();
  for (int i = 0; i < samples; ++i) {
    if (idle.count() > 0) std::this_thread::sleep_for(idle);
    auto start = Clock::now();
    call();
    times.push_back(seconds_since(start));
  }
  std::nth_element(times.begin(), times.begin() + samples / 2, times.end());
  return times[samples / 2];
}

ParallelCallCost call_cost(std::string runtime, const std::function<void()>& call) {
  // Asleep for sure: the idle pause is far beyond every runtime's spin.
  return {std::move(runtime), median_call_seconds(call, 2000, std::chrono::microseconds(0)),
          median_call_seconds(call, 40, std::chrono::microseconds(5000))};
}

}  // namespace

WaitPolicy matched_wait_policy() {
  WaitPolicy w;
  ansor_get_spin_wait(&w.ansor_pauses, &w.ansor_yields);
  const double pause = seconds_per_step(100000, [] { cpu_relax(); });
  const double yield = seconds_per_step(1000, [] { sched_yield(); });
  w.spin_seconds = w.ansor_pauses * pause + w.ansor_yields * yield;
  // libgomp polls once per pause, as ansor's pool does; its count covers the yields' time too.
  w.gomp_spincount = std::lround(w.spin_seconds / pause);
  if (std::optional<double> hz = cycle_counter_hz())
    w.openblas_timeout = std::clamp(static_cast<int>(std::lround(std::log2(w.spin_seconds * *hz))), 4, 30);
  return w;
}

void enter_protocol_environment(char** argv) {
  if (env_or(kProtocolMarker, "") == "1") return;
  WaitPolicy w = matched_wait_policy();
  ::setenv("GOMP_SPINCOUNT", std::to_string(w.gomp_spincount).c_str(), 1);
  if (w.openblas_timeout > 0) ::setenv("OPENBLAS_THREAD_TIMEOUT", std::to_string(w.openblas_timeout).c_str(), 1);
  ::setenv(kSpinSecondsVariable, fmt::format("{:.3g}", w.spin_seconds).c_str(), 1);
  ::unsetenv("OMP_WAIT_POLICY");
  ::setenv(kProtocolMarker, "1", 1);
  ::execv("/proc/self/exe", argv);
  throw std::runtime_error(fmt::format("could not run {} again under the benchmark protocol: {}", argv[0], std::strerror(errno)));
}

std::string wait_policy_description() {
  int pauses = 0, yields = 0;
  ansor_get_spin_wait(&pauses, &yields);
  const double spin_us = std::atof(env_or(kSpinSecondsVariable, "0").c_str()) * 1e6;
  const std::string openblas = env_or("OPENBLAS_THREAD_TIMEOUT", "");
  return fmt::format(
      "Thread waiting matched: ansor's pool polls {} pauses and {} yields (about {:.0f} µs here) before its threads sleep; OpenMP "
      "(oneDNN's runtime) gets GOMP_SPINCOUNT={} with OMP_WAIT_POLICY unset, the same time; OpenBLAS {}",
      pauses, yields, spin_us, env_or("GOMP_SPINCOUNT", "unset"),
      openblas.empty() ? std::string("keeps its own spin (no cycle counter known here)")
                       : fmt::format("gets OPENBLAS_THREAD_TIMEOUT={0} (2^{0} TSC cycles, the nearest power of two)", openblas));
}

void set_all_threads(int threads) {
  ansor_set_num_threads(threads);
#if ANSOR_BENCH_OPENMP
  omp_set_num_threads(threads);
#endif
#if ANSOR_BENCH_OPENBLAS
  openblas_set_num_threads(threads);
#endif
}

std::vector<ParallelCallCost> empty_parallel_call_costs() {
  std::vector<ParallelCallCost> costs;
  const int threads = ansor_get_num_threads();
  costs.push_back(call_cost("ansor pool", [threads] { ansor_parallel_for(threads, empty_chunk, nullptr); }));
#if ANSOR_BENCH_OPENMP
  costs.push_back(call_cost("OpenMP (libgomp)", [threads] {
#pragma omp parallel num_threads(threads)
    { __asm__ __volatile__("" ::: "memory"); }
  }));
#endif
  return costs;
}

double median_seconds(const std::function<void()>& call, double min_seconds) {
  call();
  std::vector<double> times;
  const auto first = Clock::now();
  while (seconds_since(first) < min_seconds || times.size() < 5) {
    auto start = Clock::now();
    call();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<Spread> interleaved(const std::vector<std::function<void()>>& calls, int rounds, double round_seconds) {
  if (rounds < 1) throw std::invalid_argument("interleaved timing needs at least one round");
  std::vector<std::vector<double>> medians(calls.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < calls.size(); ++i) medians[i].push_back(median_seconds(calls[i], round_seconds));
  std::vector<Spread> spreads;
  for (std::vector<double>& m : medians) {
    std::sort(m.begin(), m.end());
    const size_t n = m.size();
    spreads.push_back({n % 2 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2, m.front(), m.back()});
  }
  return spreads;
}

std::string format_ms(double seconds) {
  const double v = seconds * 1e3;
  return v >= 10 ? fmt::format("{:.1f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : v >= 0.1 ? fmt::format("{:.3f}", v) : fmt::format("{:.4f}", v);
}

std::string format_ms(const Spread& s) { return fmt::format("{} [{}–{}]", format_ms(s.median), format_ms(s.min), format_ms(s.max)); }

std::string non_native_reason(PrimitiveKind kind, std::string_view implementation) {
  if (implementation.substr(0, 3) == "ref")
    return fmt::format("{} is the library's reference implementation, correct but not meant to be fast", implementation);
  if ((kind == PrimitiveKind::Convolution || kind == PrimitiveKind::Deconvolution) && implementation.substr(0, 4) == "gemm")
    return fmt::format("{} computes the convolution through an explicit GEMM, the fallback where the library's direct kernels do not take "
                       "the layouts given",
                       implementation);
  return "";
}

std::string LibraryCall::implementation() const {
  std::string joined;
  for (const Part& p : parts) joined += (joined.empty() ? "" : " + ") + p.implementation;
  return joined;
}

std::string LibraryCall::non_native() const {
  for (const Part& p : parts)
    if (std::string reason = non_native_reason(p.kind, p.implementation); !reason.empty()) return reason;
  return "";
}

std::optional<double> LibraryRow::reported_seconds() const {
  if (!non_native.empty()) return std::nullopt;
  return time.median;
}

const LibraryRow* best_reported(const std::vector<LibraryRow>& rows) {
  const LibraryRow* best = nullptr;
  for (const LibraryRow& r : rows)
    if (r.reported_seconds() && (!best || *r.reported_seconds() < *best->reported_seconds())) best = &r;
  return best;
}

std::string library_cell(const LibraryRow& row) {
  if (!row.reported_seconds()) return fmt::format("no native implementation ({})", row.implementation);
  return format_ms(row.time);
}

Comparison compare_with_libraries(const std::function<void()>& ours, const std::vector<NamedPreparer>& libraries,
                                  const std::vector<const void*>& inputs, size_t output_bytes, const OutputChecker& check,
                                  int threads, bool one_thread) {
  Comparison result;
  // The libraries write into buffers aligned as ours are.
  std::vector<AlignedVector<std::byte>> outputs(libraries.size(), AlignedVector<std::byte>(output_bytes));
  {
    set_all_threads(threads);
    std::vector<LibraryCall> calls;
    for (size_t i = 0; i < libraries.size(); ++i) {
      calls.push_back(libraries[i].prepare(inputs, outputs[i].data()));
      calls.back().row_major_call()();
      OutputCheck c = check(outputs[i].data());
      const LibraryCall& call = calls.back();
      result.libraries.push_back(
          {call.library, call.implementation(), call.layouts, call.non_native(), {}, std::nullopt, std::nullopt, std::nullopt, c.max_diff, c.agrees});
    }
    std::vector<std::function<void()>> timed = {ours};
    for (const LibraryCall& c : calls) {
      timed.push_back(c.run);
      if (c.run_plain_io) timed.push_back(c.run_plain_io);
      if (c.reorders) timed.push_back(c.reorders);
    }
    std::vector<Spread> spreads = interleaved(timed);
    size_t next = 0;
    result.ours = spreads[next++];
    for (size_t i = 0; i < calls.size(); ++i) {
      result.libraries[i].time = spreads[next++];
      if (calls[i].run_plain_io) result.libraries[i].plain_io = spreads[next++];
      if (calls[i].reorders) result.libraries[i].reorders = spreads[next++];
    }
  }
  if (one_thread) {
    set_all_threads(1);
    std::vector<LibraryCall> calls;
    std::vector<std::function<void()>> timed = {ours};
    for (size_t i = 0; i < libraries.size(); ++i) {
      calls.push_back(libraries[i].prepare(inputs, outputs[i].data()));
      timed.push_back(calls.back().run);
    }
    std::vector<Spread> spreads = interleaved(timed);
    result.ours_one_thread = spreads[0];
    for (size_t i = 0; i < calls.size(); ++i) result.libraries[i].one_thread = spreads[i + 1];
    set_all_threads(threads);
  }
  return result;
}

double geomean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace ansor::bench
