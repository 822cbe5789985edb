// The record filter and the best-records query.
#include "records/record_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "records/record_match.h"

namespace ansor {

namespace {

std::optional<RecordRejection> identity_rejection(const Record& r, const RecordScope& scope, CompilerMatch compiler) {
  if (r.workload_key != scope.dag->workload_key()) return RecordRejection::OtherWorkload;
  if (r.dag != scope.dag->canonical_text()) return RecordRejection::OtherDag;
  if (r.target != scope.target) return RecordRejection::OtherTarget;
  if (!replays(compiler)) return RecordRejection::OtherCompiler;
  return std::nullopt;
}

}  // namespace

std::optional<RecordRejection> result_rejection(const Record& r) {
  if (!r.ok()) return RecordRejection::Failed;
  if (!(std::isfinite(r.seconds) && r.seconds > 0)) return RecordRejection::NoTime;
  return std::nullopt;
}

std::string_view rejection_name(RecordRejection r) {
  switch (r) {
    case RecordRejection::OtherWorkload: return "another workload";
    case RecordRejection::OtherDag: return "another DAG under the same workload key";
    case RecordRejection::OtherTarget: return "another target";
    case RecordRejection::OtherCompiler: return "another compiler";
    case RecordRejection::DoesNotReplay: return "steps do not replay";
    case RecordRejection::Failed: return "measurement failed";
    case RecordRejection::NoTime: return "no positive finite time";
  }
  return "unknown";
}

RecordCheck check_record(const Record& record, const RecordScope& scope) {
  RecordCheck check;
  check.rejection = identity_rejection(record, scope, match_compiler(record.compiler, scope.compiler));
  if (check.rejection) return check;
  try {
    check.state = replay(scope.dag, record.steps);
  } catch (const StepError& e) {
    check.rejection = RecordRejection::DoesNotReplay;
    check.detail = e.what();
    return check;
  }
  check.rejection = result_rejection(record);
  return check;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

std::vector<ReplayedRecord> best_records(const std::vector<Record>& records, const RecordScope& scope, size_t k,
                                         std::vector<std::string>& warnings) {
  // A schedule measured more than once (the tuner's confirmation, another run, another
  // machine of the target) counts once, at the median of its measurements under one compiler:
  // the fastest of several would reward the luckiest run. Its first record stands for it.
  struct Schedule {
    CompilerMatch compiler;
    const Record* first;
    std::vector<double> seconds;
  };
  std::map<std::string_view, CompilerMatch> compilers;  // a cache names few compilers
  std::map<std::pair<std::string_view, std::string>, size_t> index;
  std::vector<Schedule> schedules;
  for (const Record& r : records) {
    auto [it, added] = compilers.try_emplace(r.compiler, CompilerMatch::Other);
    if (added) it->second = match_compiler(r.compiler, scope.compiler);
    if (identity_rejection(r, scope, it->second) || result_rejection(r)) continue;
    auto [at, fresh] = index.try_emplace({r.compiler, schedule_key(r)}, schedules.size());
    if (fresh) schedules.push_back({it->second, &r, {}});
    schedules[at->second].seconds.push_back(r.seconds);
  }
  // Replaying is the costly check: sort what passes the others (by compiler match, then time),
  // then replay the fastest first.
  std::vector<std::tuple<CompilerMatch, double, const Record*>> candidates;
  for (const Schedule& s : schedules) candidates.emplace_back(s.compiler, median_of(s.seconds), s.first);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b)); });
  std::vector<ReplayedRecord> out;
  std::set<std::string> replayed;
  std::optional<CompilerMatch> taken;  // the compiler match of the records taken: a better one wins over every worse
  for (const auto& [compiler, seconds, first] : candidates) {
    if (out.size() >= k || (taken && compiler != *taken)) break;
    Record r = *first;
    r.seconds = seconds;
    RecordCheck check = check_record(r, scope);
    if (check.usable()) {
      // The same schedule under compilers of one match (flags in another order) counts once.
      if (!replayed.insert(check.state->signature()).second) continue;
      taken = compiler;
      out.push_back({std::move(r), std::move(*check.state)});
    } else {
      warnings.push_back(fmt::format("a record of '{}' does not apply and is ignored: {}: {}", r.kernel,
                                     rejection_name(*check.rejection), check.detail));
    }
  }
  return out;
}

std::vector<ReplayedRecord> best_records(const TuningCache& cache, const RecordScope& scope, const std::string& kernel, size_t k,
                                         std::vector<std::string>& notes) {
  std::vector<std::string> unreadable = cache.warnings(scope.target);
  notes.insert(notes.end(), unreadable.begin(), unreadable.end());
  const std::string workload = scope.dag->workload_key();
  auto found_for = [&](const std::string& target) {
    RecordScope tier = scope;
    tier.target = target;
    // Only the scope's own target warns about its records: the others are a fallback.
    std::vector<std::string> ignored;
    std::vector<ReplayedRecord> found = best_records(cache.load(target, workload), tier, k, target == scope.target ? notes : ignored);
    if (!found.empty())
      if (std::string note = step_down_note(kernel, scope.target, target, scope.compiler, found.front().record.compiler); !note.empty())
        notes.push_back(std::move(note));
    return found;
  };
  // The cache's other targets are listed only when the scope's own has no usable record.
  if (std::vector<ReplayedRecord> found = found_for(scope.target); !found.empty()) return found;
  for (const std::string& target : serving_targets(cache.targets(), scope.target))
    if (target != scope.target)
      if (std::vector<ReplayedRecord> found = found_for(target); !found.empty()) return found;
  return {};
}

}  // namespace ansor
