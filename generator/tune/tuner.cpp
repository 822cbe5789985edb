// The tuning loop of one kernel.
#include "tune/tuner.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <limits>
#include <set>

#include "backend/backend_registry.h"
#include "records/record_filter.h"
#include "records/record_transfer.h"
#include "sampler/default_schedule.h"
#include "tune/learned_scorer.h"

namespace ansor {

namespace {

std::string describe_time(const Record& r, double flops) {
  return fmt::format("{:.3f} ms ({:.1f} GFLOP/s)", r.seconds * 1e3, flops / r.seconds / 1e9);
}

}  // namespace

TuningTask::TuningTask(std::string kernel_name, std::shared_ptr<const ComputeDAG> dag, CandidateMeasurer& measurer,
                       const TuningCache& cache, TuneOptions options, std::function<std::shared_ptr<ProgramScorer>()> scorer)
    : task_{std::move(kernel_name), std::move(dag), sampler_context_for(measurer.target()), options.seed,
            scorer ? std::move(scorer) : learned_scorer_source(cache, measurer.target().to_string(), options.seed)},
      measurer_(measurer),
      cache_(cache),
      options_(std::move(options)) {
  task_.new_program = [this](const State& s) { return measurer_.new_program({task_.kernel_name, s}); };
  policy_ = make_search_policy(options_.policy, task_);
  default_schedule_ = default_schedule(task_.dag, task_.sampler);
  load_known(cache);
}

void TuningTask::note_time(const Record& r, const State& state) {
  auto [it, added] = schedules_.try_emplace(schedule_key(r), MeasuredSchedule{state, r, {}});
  it->second.seconds.push_back(r.seconds);
}

std::vector<const TuningTask::MeasuredSchedule*> TuningTask::fastest_schedules() const {
  std::vector<std::pair<double, const MeasuredSchedule*>> timed;
  for (const auto& [key, s] : schedules_) timed.push_back({median_of(s.seconds), &s});
  std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const MeasuredSchedule*> out;
  for (const auto& [seconds, s] : timed) out.push_back(s);
  return out;
}

void TuningTask::choose_best() {
  const MeasuredSchedule* fastest = nullptr;
  double fastest_seconds = 0;
  // The first of equal medians in key order, as the stable sort of fastest_schedules() has it.
  for (const auto& [key, s] : schedules_) {
    const double seconds = median_of(s.seconds);
    if (!fastest || seconds < fastest_seconds) {
      fastest = &s;
      fastest_seconds = seconds;
    }
  }
  if (!fastest) return;
  summary_.best = fastest->first;
  summary_.best->seconds = fastest_seconds;
}

void TuningTask::load_known(const TuningCache& cache) {
  RecordScope scope{task_.dag, measurer_.target().to_string(), measurer_.compiler().identity()};
  const std::string default_signature = default_schedule_ ? default_schedule_->signature() : std::string();
  std::vector<MeasuredCandidate> known;
  for (Record& r : cache.load(scope.target).records) {
    RecordCheck check = check_record(r, scope);
    if (check.usable()) note_time(r, *check.state);
    // Failed schedules were tried too: the policy must not propose them again. A confirmation
    // is no trial, and tells the policy nothing new.
    if (check.state && !r.remeasure) {
      summary_.earlier_seconds.push_back(check.usable() ? r.seconds : std::numeric_limits<double>::infinity());
      if (default_schedule_ && check.state->signature() == default_signature) {
        default_schedule_.reset();
        if (check.usable()) summary_.default_seconds = r.seconds;
      }
      known.push_back({std::move(*check.state), std::move(r)});
    }
  }
  if (!known.empty()) policy_->update(known);
  choose_best();
}

void TuningTask::find_seeds(std::ostream& progress) {
  seeds_looked_for_ = true;
  if (summary_.best || options_.transfer_seeds <= 0) return;
  RecordScope scope{task_.dag, measurer_.target().to_string(), measurer_.compiler().identity()};
  std::vector<TransferredRecord> found = transferred_records(cache_, scope, static_cast<size_t>(options_.transfer_seeds));
  const std::string default_signature = default_schedule_ ? default_schedule_->signature() : std::string();
  std::set<std::string> sources;
  double best_gflops = 0;
  for (TransferredRecord& t : found) {
    if (t.state.signature() == default_signature) continue;
    sources.insert(t.record.workload_key);
    best_gflops = std::max(best_gflops, t.gflops);
    seeds_.push_back(std::move(t.state));
  }
  if (!seeds_.empty())
    fmt::print(progress,
               "[tune] {}: no record of its own; {} schedule{} of the same computation at {} other shape{} (up to {:.1f} GFLOP/s there) "
               "seed the search\n",
               task_.kernel_name, seeds_.size(), seeds_.size() == 1 ? "" : "s", sources.size(), sources.size() == 1 ? "" : "s", best_gflops);
}

std::vector<State> TuningTask::next_batch(int wanted, double& search_seconds) {
  // The default schedule (what the kernel gets without a record) is measured first, once: a
  // search that has not found better yet never leaves the kernel slower than no tuning at all.
  // Schedules mapped from other shapes come next, before the search proposes anything, so that
  // its first generation grows from them.
  int from_policy = seeds_.empty() ? wanted - (default_schedule_ ? 1 : 0) : 0;
  auto search_start = std::chrono::steady_clock::now();
  std::vector<State> proposed = from_policy > 0 ? policy_->propose(from_policy) : std::vector<State>{};
  search_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count();
  const int seeds = static_cast<int>(std::min(seeds_.size(), static_cast<size_t>(wanted - (default_schedule_ ? 1 : 0))));
  proposed.insert(proposed.begin(), std::make_move_iterator(seeds_.begin()), std::make_move_iterator(seeds_.begin() + seeds));
  seeds_.erase(seeds_.begin(), seeds_.begin() + seeds);
  summary_.transferred += seeds;
  if (default_schedule_) {
    const std::string signature = default_schedule_->signature();
    proposed.erase(std::remove_if(proposed.begin(), proposed.end(), [&](const State& s) { return s.signature() == signature; }),
                   proposed.end());
    proposed.insert(proposed.begin(), std::move(*default_schedule_));
    default_schedule_.reset();
  }
  if (proposed.size() > static_cast<size_t>(wanted)) proposed.erase(proposed.begin() + wanted, proposed.end());
  return proposed;
}

int TuningTask::run_round(int n, std::ostream& progress) {
  const int wanted = std::min(n, trials_left());
  if (wanted <= 0) return 0;
  auto round_start = std::chrono::steady_clock::now();
  if (!seeds_looked_for_) find_seeds(progress);
  double build_before = measurer_.build_seconds(), run_before = measurer_.run_seconds(), wait_before = measurer_.lock_wait_seconds();
  double codegen_before = measurer_.codegen_seconds();
  double search_seconds = 0;
  int fresh = 0, copies = 0, failed = 0;
  // A schedule that lowers to a program measured before gets a copy of that measurement
  // (MeasureOptions::reuse_programs) and is no trial: it tells the search nothing new. The round
  // asks the policy for more until it has `wanted` new programs, the policy has nothing left, or
  // kCopiesPerTrial copies per wanted trial say that the search keeps finding what it measured.
  while (fresh < wanted && copies < kCopiesPerTrial * wanted) {
    const bool default_first = default_schedule_.has_value();
    std::vector<State> proposed = next_batch(wanted - fresh, search_seconds);
    if (proposed.empty()) break;
    std::vector<Candidate> batch;
    for (State& s : proposed) batch.push_back({task_.kernel_name, std::move(s)});
    // Each record is saved as soon as it is measured: an interrupted run loses none.
    std::vector<Record> records = measurer_.measure(batch, summary_.best ? summary_.best->seconds : 0, [&](const Record& r) {
      if (!r.copied) cache_.append(r);
    });
    const int copied = static_cast<int>(std::count_if(records.begin(), records.end(), [](const Record& r) { return r.copied; }));
    std::vector<MeasuredCandidate> measured;
    for (size_t i = 0; i < records.size(); ++i) {
      if (!records[i].ok() && !records[i].copied) ++failed;
      if (i == 0 && default_first && !result_rejection(records[i])) summary_.default_seconds = records[i].seconds;
      if (!result_rejection(records[i])) note_time(records[i], batch[i].state);
      measured.push_back({std::move(batch[i].state), std::move(records[i])});
    }
    fresh += static_cast<int>(measured.size()) - copied;
    copies += copied;
    choose_best();
    auto update_start = std::chrono::steady_clock::now();
    policy_->update(measured);
    search_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - update_start).count();
    if (copied == 0) break;  // fewer than wanted only because the policy had no more
  }
  if (fresh == 0) {
    fmt::print(progress, "[tune] {}: no new schedules to try after {} trials{}\n", task_.kernel_name, summary_.measured,
               copies ? fmt::format(" ({} proposed schedules lowered to programs measured before)", copies) : "");
    summary_.copies += copies;
    return 0;
  }
  summary_.measured += fresh;
  summary_.copies += copies;
  summary_.failed += failed;
  ++rounds_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - round_start).count();
  // Where the round's time went: the search (propose and update), lowering and printing,
  // compiling, running, and waiting for another process's measurements; with a budget of its
  // own, how long the kernel has taken and will take at this pace.
  std::string trials = options_.shared_budget
                           ? fmt::format("{} trials", summary_.measured)
                           : fmt::format("{}/{} trials in {:.0f} s, about {:.0f} s left", summary_.measured, options_.trials, seconds_,
                                         seconds_ / std::max(1, summary_.measured) * trials_left());
  fmt::print(progress,
             "[tune] {}: {}, best {}; batch {}: {} printed in {:.1f} s, built in {:.1f} s, measured in {:.1f} s, search {:.1f} s, lock wait "
             "{:.1f} s{}{}\n",
             task_.kernel_name, trials, summary_.best ? describe_time(*summary_.best, task_.dag->flop_count()) : "none yet", rounds_,
             fresh, measurer_.codegen_seconds() - codegen_before, measurer_.build_seconds() - build_before,
             measurer_.run_seconds() - run_before, search_seconds, measurer_.lock_wait_seconds() - wait_before,
             copies ? fmt::format(", and {} programs measured before (no trials)", copies) : "",
             failed ? fmt::format(", {} failed", failed) : "");
  progress.flush();
  return fresh;
}

int TuningTask::confirm_best(std::ostream& progress) {
  const int wanted = options_.confirm_schedules, needed = options_.confirm_measurements;
  if (wanted <= 0 || needed <= 1 || summary_.measured == 0 || !summary_.best) return 0;
  auto start = std::chrono::steady_clock::now();
  const Record before = *summary_.best;
  int made = 0, failed = 0;
  // A pass measures once more each of the fastest schedules that lacks measurements, one after
  // the other, so that a slow minute of the machine falls on several schedules, not on all the
  // measurements of one. A schedule that the new medians lift among the fastest joins a later
  // pass.
  for (int pass = 0; pass < needed; ++pass) {
    std::vector<const MeasuredSchedule*> fastest = fastest_schedules();
    std::vector<Candidate> batch;
    for (size_t i = 0; i < fastest.size() && static_cast<int>(i) < wanted; ++i)
      if (static_cast<int>(fastest[i]->seconds.size()) < needed) {
        Candidate c{task_.kernel_name, fastest[i]->state};
        c.remeasure = true;
        batch.push_back(std::move(c));
      }
    if (batch.empty()) break;
    std::vector<Record> records = measurer_.measure(batch, 0, [&](const Record& r) {
      Record again = r;
      again.remeasure = true;
      cache_.append(again);
    });
    for (size_t i = 0; i < records.size(); ++i) {
      if (result_rejection(records[i])) {
        ++failed;
        continue;
      }
      note_time(records[i], batch[i].state);
    }
    made += static_cast<int>(batch.size());
  }
  summary_.remeasured += made;
  choose_best();
  const double flops = task_.dag->flop_count();
  const bool changed = schedule_key(before) != schedule_key(*summary_.best);
  fmt::print(progress, "[tune] {}: confirmed the fastest schedules with {} more measurement{} in {:.1f} s{}; best {}{}\n", task_.kernel_name,
             made, made == 1 ? "" : "s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
             failed ? fmt::format(" ({} failed)", failed) : "", describe_time(*summary_.best, flops),
             changed ? fmt::format(", not the schedule that measured fastest before ({})", describe_time(before, flops))
                     : fmt::format(" ({} before)", describe_time(before, flops)));
  progress.flush();
  return made;
}

TuneSummary tune_kernel(const std::string& kernel_name, std::shared_ptr<const ComputeDAG> dag, CandidateMeasurer& measurer,
                        const TuningCache& cache, const TuneOptions& options, std::ostream& progress,
                        std::function<std::shared_ptr<ProgramScorer>()> scorer) {
  auto start = std::chrono::steady_clock::now();
  const double codegen = measurer.codegen_seconds(), build = measurer.build_seconds(), build_cpu = measurer.build_cpu_seconds(),
               run = measurer.run_seconds(), wait = measurer.lock_wait_seconds();
  const int reused = measurer.reused();
  TuningTask task(kernel_name, std::move(dag), measurer, cache, options, std::move(scorer));
  while (!task.budget_spent() && task.run_round(options.batch_size, progress) > 0) {
  }
  task.confirm_best(progress);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const TuneSummary& summary = task.summary();
  // The run's time by phase; the search's share is what the others leave (proposing, learning,
  // and making the policy and its cost model).
  double printed = measurer.codegen_seconds() - codegen, built = measurer.build_seconds() - build, measured = measurer.run_seconds() - run,
         waited = measurer.lock_wait_seconds() - wait;
  fmt::print(progress,
             "[tune] {}: done, {} trials in {:.1f} s ({} failed), {:.2f} trials/s: printing {:.1f} s, compiling {:.1f} s ({:.1f} s of CPU), "
             "running {:.1f} s, lock wait {:.1f} s, search and the rest {:.1f} s; {} programs measured before; {} confirmation measurements\n",
             kernel_name, summary.measured, total, summary.failed, summary.measured / std::max(total, 1e-9), printed, built,
             measurer.build_cpu_seconds() - build_cpu, measured, waited, std::max(0.0, total - printed - built - measured - waited),
             measurer.reused() - reused, summary.remeasured);
  return summary;
}

}  // namespace ansor
