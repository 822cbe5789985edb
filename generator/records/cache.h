// The tuning cache: a directory with one record file per target (`<target>.jsonl`, one record
// per line), shared by tuning runs, builds and machines.
//
// Appends are whole lines under an exclusive file lock, so concurrent writers never interleave;
// a writer killed mid-line leaves at most a torn last line, which the next writer closes with a
// newline and readers skip. Every line is validated when read: a corrupt, foreign or hostile
// line is skipped with a warning naming the file and line, and loses nothing else.
//
// A cache reads each file once: the first load of a target parses its file, and later loads (by
// this cache or any copy of it: the emitter, the tuner and the cost model of a run share one)
// answer from the records kept, to which the cache's own appends are added. Records another
// process appends meanwhile are seen by the next run. A cache and its copies serve one thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records/record.h"

namespace ansor {

class TuningCache {
 public:
  explicit TuningCache(std::string dir) : dir_(std::move(dir)), index_(std::make_shared<Index>()) {}

  const std::string& dir() const { return dir_; }
  // The file holding records of a target.
  std::string file_for(const std::string& target) const;

  // Appends a record to its target's file (and to the records loaded of it). Throws
  // std::runtime_error on I/O failure.
  void append(const Record& record) const;

  struct Loaded {
    std::vector<Record> records;
    std::vector<std::string> warnings;  // "file:line: skipped: why"
  };
  // Every readable record of the target (none when it has no file). Throws std::runtime_error
  // when the file exists but cannot be opened.
  Loaded load(const std::string& target) const;
  // The warnings of reading the target's file.
  std::vector<std::string> warnings(const std::string& target) const;
  // The target's records of one workload, in the file's order.
  std::vector<Record> load(const std::string& target, const std::string& workload_key) const;

  // The targets the cache has records of: each file's target, as its first readable record
  // names it, sorted.
  std::vector<std::string> targets() const;

 private:
  // A target's file as read, with its records' positions by workload key.
  struct TargetRecords {
    Loaded loaded;
    std::multimap<std::string, size_t> by_workload;
  };
  struct Index {
    std::map<std::string, TargetRecords> targets;  // each loaded target
    std::optional<std::vector<std::string>> names;  // targets(), once listed
  };
  const TargetRecords& loaded(const std::string& target) const;

  std::string dir_;
  std::shared_ptr<Index> index_;
};

}  // namespace ansor
