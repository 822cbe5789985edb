// Schedules for a kernel that has no record of its own: the best records of the same computation
// at other shapes (dag/computation_key.h) in the cache, mapped onto the kernel's DAG
// (schedule/shape_transfer.h). Tuning measures them first and seeds its search with them.
//
// The records come from the best target serving the scope's (record_match.h's serving_targets:
// the target itself, the same CPU model, the same vector ISA) that has any, and from whatever
// compiler: a mapped schedule is a new program, measured again before anything trusts it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "records/cache.h"
#include "records/record.h"
#include "records/record_filter.h"
#include "schedule/state.h"

namespace ansor {

struct TransferredRecord {
  Record record;  // as measured at its own shape
  State state;    // its steps mapped onto the scope's DAG (a record may give two)
  double gflops = 0;  // the record's speed at its own shape
};

// Up to k distinct schedules mapped from successful records of other workloads with the scope
// DAG's computation key, each record mapped both ways (shape_transfer.h's SplitFit): divisors of
// the extents first, then whole inner tiles with a ragged tail (faster only where lowering
// takes the tail's guard out of the tile: docs/search.md). Shapes closest to the scope's (the sum
// over every tensor dimension of |log(extent ratio)|) come first, each in turn giving its
// fastest record not yet taken, so that the seeds are the best schedules of several shapes
// rather than many of one. Records whose DAG does not parse or whose steps do not map are
// passed over.
std::vector<TransferredRecord> transferred_records(const TuningCache& cache, const RecordScope& scope, size_t k);

}  // namespace ansor
