// The record filter and the best-records query.
#include "records/record_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace ansor {

namespace {

std::optional<RecordRejection> identity_rejection(const Record& r, const RecordScope& scope) {
  if (r.workload_key != scope.dag->workload_key()) return RecordRejection::OtherWorkload;
  if (r.dag != scope.dag->canonical_text()) return RecordRejection::OtherDag;
  if (r.target != scope.target) return RecordRejection::OtherTarget;
  if (r.compiler != scope.compiler) return RecordRejection::OtherCompiler;
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
  check.rejection = identity_rejection(record, scope);
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

std::vector<ReplayedRecord> best_records(const std::vector<Record>& records, const RecordScope& scope, size_t k,
                                         std::vector<std::string>& warnings) {
  // Replaying is the costly check: sort what passes the others, then replay the fastest first.
  std::vector<const Record*> candidates;
  for (const Record& r : records)
    if (!identity_rejection(r, scope) && !result_rejection(r)) candidates.push_back(&r);
  std::stable_sort(candidates.begin(), candidates.end(), [](const Record* a, const Record* b) { return a->seconds < b->seconds; });
  std::vector<ReplayedRecord> out;
  std::set<std::string> schedules;
  for (const Record* r : candidates) {
    if (out.size() >= k) break;
    RecordCheck check = check_record(*r, scope);
    if (check.usable()) {
      // A schedule measured again (another run, another machine) counts once, at its best time.
      if (!schedules.insert(check.state->signature()).second) continue;
      out.push_back({*r, std::move(*check.state)});
    } else {
      warnings.push_back(fmt::format("a record of '{}' does not apply and is ignored: {}: {}", r->kernel,
                                     rejection_name(*check.rejection), check.detail));
    }
  }
  return out;
}

}  // namespace ansor
