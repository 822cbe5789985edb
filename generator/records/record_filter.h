// Which records of a cache are valid, usable records of one tuning task: the one rule that the
// tuner (schedules already tried, best so far) and the emitter (best records) both apply.
//
// A record belongs to the task when it has the task's workload key and canonical DAG text, its
// target, and a compiler whose records the task's compiler replays (record_match.h: the same
// identity, or the same family and major version with the same flags after normalisation). It
// is usable when it also succeeded, with a positive finite time, and its steps replay on the DAG.
// Records store and replay; they do not lower: whether a replayed schedule lowers is for whoever
// lowers it (the emitter) to find out.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dag/compute_dag.h"
#include "records/cache.h"
#include "records/record.h"
#include "schedule/state.h"

namespace ansor {

// How many of a kernel's best records a build tries, fastest first, before its default schedule
// (the first that lowers is emitted): what a distilled cache keeps of each (record_pool.h).
inline constexpr size_t kBestRecordsTried = 4;

// What a task's records must match.
struct RecordScope {
  std::shared_ptr<const ComputeDAG> dag;
  std::string target;    // Target::to_string()
  std::string compiler;  // KernelCompiler::identity()
};

// Why a record is not usable, in the order the checks run.
enum class RecordRejection : uint8_t { OtherWorkload, OtherDag, OtherTarget, OtherCompiler, DoesNotReplay, Failed, NoTime };

std::string_view rejection_name(RecordRejection r);

struct RecordCheck {
  std::optional<RecordRejection> rejection;  // nullopt: usable
  std::optional<State> state;                // the replayed schedule: the record belongs to the task and replays
  std::string detail;                        // why it does not replay

  bool usable() const { return !rejection; }
};

// The result checks alone (succeeded, with a positive finite time): for records just measured
// for the task, which belong to it by construction.
std::optional<RecordRejection> result_rejection(const Record& record);

// Every check; replays only records that belong to the scope. A record that belongs and
// replays but failed (or has no time) still has its state: its schedule was tried.
RecordCheck check_record(const Record& record, const RecordScope& scope);

// A usable record with its replayed schedule.
struct ReplayedRecord {
  Record record;
  State state;
};

// The median of some times (the mean of the middle two of an even count); 0 for none.
double median_of(std::vector<double> values);

// The k fastest usable records of distinct schedules, fastest first (a schedule measured more
// than once counts once, its first record with the median of its times), all of the best
// compiler match that has a usable record (the exact compiler before the same flags in another
// order before another minor version). Records that belong to the scope and succeeded but do not replay are skipped with a
// warning.
std::vector<ReplayedRecord> best_records(const std::vector<Record>& records, const RecordScope& scope, size_t k,
                                         std::vector<std::string>& warnings);

// The k best records of a kernel in a cache, of the best target that has a usable one
// (serving_targets: the scope's target, then the same CPU model, then the same ISA). Notes get the
// warnings of the scope's target's file and records, and the one line of a step down from an
// exact match (step_down_note).
std::vector<ReplayedRecord> best_records(const TuningCache& cache, const RecordScope& scope, const std::string& kernel, size_t k,
                                         std::vector<std::string>& notes);

}  // namespace ansor
