// The tuning loop of one kernel.
#include "tune/tuner.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <set>

#include "sampler/annotation.h"

namespace ansor {

namespace {

std::string describe_time(const Record& r, double flops) {
  return fmt::format("{:.3f} ms ({:.1f} GFLOP/s)", r.seconds * 1e3, flops / r.seconds / 1e9);
}

}  // namespace

TuneSummary tune_kernel(const Kernel& kernel, Measurer& measurer, const TuningCache& cache, const TuneOptions& options,
                        std::ostream& progress) {
  auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
  TuneSummary summary;
  std::string compiler = measurer.compiler().identity();
  std::set<std::string> seen;
  TuningCache::Loaded existing = cache.load(measurer.target().to_string());
  for (const Record& r : existing.records) {
    if (r.workload_key != dag->workload_key() || r.compiler != compiler) continue;
    try {
      seen.insert(replay(dag, r.steps).signature());
    } catch (const StepError&) {
      continue;
    }
    if (r.ok() && (!summary.best || r.seconds < summary.best->seconds)) summary.best = r;
  }
  // Random search (paper §4): sketches from the derivation rules, annotated at random.
  SamplerContext ctx = SamplerContext::for_target(measurer.target());
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::for_context(ctx));
  Annotator annotator(ctx);
  std::mt19937_64 rng(options.seed);
  int batch_index = 0;
  auto start = std::chrono::steady_clock::now();
  while (summary.measured < options.trials) {
    int wanted = std::min(options.batch_size, options.trials - summary.measured);
    std::vector<Candidate> batch;
    // Distinct schedules only; a small space runs out of new ones.
    for (int attempts = 0; static_cast<int>(batch.size()) < wanted && attempts < wanted * 50; ++attempts) {
      State s = sample_program(sketches, annotator, rng);
      if (!seen.insert(s.signature()).second) continue;
      size_t trial = static_cast<size_t>(summary.measured) + batch.size();
      PlantedFault fault = trial < options.faults.size() ? options.faults[trial] : PlantedFault::None;
      batch.push_back({kernel.name, std::move(s), fault});
    }
    if (batch.empty()) {
      fmt::print(progress, "[tune] {}: no new schedules to try after {} trials\n", kernel.name, summary.measured);
      break;
    }
    double build_before = measurer.build_seconds(), run_before = measurer.run_seconds();
    // Each record is saved as soon as it is measured: an interrupted run loses none.
    std::vector<Record> records = measurer.measure(batch, [&](const Record& r) { cache.append(r); });
    int failed = 0;
    for (const Record& r : records) {
      ++summary.measured;
      if (!r.ok()) {
        ++failed;
        continue;
      }
      if (!summary.best || r.seconds < summary.best->seconds) summary.best = r;
    }
    summary.failed += failed;
    ++batch_index;
    fmt::print(progress, "[tune] {}: {}/{} trials, best {}; batch {}: {} built in {:.1f} s, measured in {:.1f} s{}\n", kernel.name,
               summary.measured, options.trials, summary.best ? describe_time(*summary.best, dag->flop_count()) : "none yet", batch_index,
               batch.size(), measurer.build_seconds() - build_before, measurer.run_seconds() - run_before,
               failed ? fmt::format(", {} failed", failed) : "");
    progress.flush();
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(progress, "[tune] {}: done, {} trials in {:.1f} s ({} failed)\n", kernel.name, summary.measured, total, summary.failed);
  return summary;
}

}  // namespace ansor
