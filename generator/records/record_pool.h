// Records as a shared asset: pooling the record files of several machines or shards into one
// cache, trimming a cache to what builds and the cost model use, and summarising a cache.
//
// Pooling and trimming rewrite a target's file atomically under its exclusive lock (record_file.h),
// so they may run beside a tuner appending to the same cache: the tuner's appends wait for the
// lock and then go to the new file. Unreadable lines of the inputs are skipped, each reported
// with its file and line, and lose nothing else.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "records/record_filter.h"

namespace ansor {

// The record files that `inputs` name: a directory stands for its `.jsonl` files (a cache), in
// name order; a file for itself. Throws std::runtime_error for an input that does not exist.
std::vector<std::string> record_files_of(const std::vector<std::string>& inputs);

struct MergeReport {
  size_t read = 0;                    // readable records in the inputs
  size_t added = 0;                   // written to the output cache
  size_t duplicates = 0;              // already there, or read twice
  std::vector<std::string> skipped;   // "file:line: skipped: why", inputs and output files
  std::map<std::string, size_t> added_by_file;  // output file -> records added
};

// Adds to the cache directory `out_dir` every record of the inputs (record_files_of) it does not
// hold yet, each into its target's file; records are the same when their lines are after
// normalisation (record_to_line), so repeated measurements of a schedule all stay. The output's
// own records and their order are kept; an output file's unreadable lines are dropped (and
// reported) only when the file is rewritten. Throws std::runtime_error on I/O failure.
MergeReport merge_records(const std::string& out_dir, const std::vector<std::string>& inputs);

struct DistillOptions {
  size_t keep = kBestRecordsTried;  // fastest schedules kept per workload, target and compiler
  size_t train = 16;                // further schedules kept for the cost model, spread over the times
};

struct DistilledFile {
  std::string file;  // as written
  size_t records_before = 0, records_after = 0;
  size_t bytes_before = 0, bytes_after = 0;
  size_t workloads = 0;
  size_t unchecked = 0;  // records kept as they are: their DAG does not parse here
};

struct DistillReport {
  std::vector<DistilledFile> files;
  std::vector<std::string> skipped;  // unreadable lines (dropped), and records that do not replay
};

// Keeps of each record file of the cache `dir` (record_files_of) the records a build chooses
// among, the kept schedules' every measurement, and `train` more usable schedules at evenly
// spaced ranks of the rest, for the cost model: per workload, target and compiler, the `keep`
// fastest usable schedules by best_records' own ranking, so a build from the distilled cache
// chooses the records it chose before. Failed and unreplayable records go. Writes into
// `out_dir` (its files replaced), or over the cache itself when `out_dir` is empty.
DistillReport distill_records(const std::string& dir, const std::string& out_dir, const DistillOptions& options);

struct WorkloadStats {
  std::string workload_key;
  std::string kernel;           // as its latest record names it
  double flops = 0;             // of its DAG; 0 when the DAG does not parse here
  size_t trials = 0, failed = 0, remeasures = 0;
  std::optional<double> best_seconds;  // the fastest schedule's median time
  std::set<std::string> versions;      // the generator versions of its records
};

struct TargetStats {
  std::string target;
  std::vector<std::string> files;
  std::vector<WorkloadStats> workloads;  // by kernel name
  size_t trials = 0, failed = 0;
  std::set<std::string> versions;
  size_t skipped = 0;  // unreadable lines
};

// Per target (by name), what the inputs' records (record_files_of) hold.
std::vector<TargetStats> cache_stats(const std::vector<std::string>& inputs);

}  // namespace ansor
