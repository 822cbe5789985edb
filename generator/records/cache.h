// The tuning cache: a directory with one record file per target (`<target>.jsonl`, one record
// per line), shared by tuning runs, builds and machines.
//
// Appends are whole lines under an exclusive file lock, so concurrent writers never interleave;
// a writer killed mid-line leaves at most a torn last line, which the next writer closes with a
// newline and readers skip. Every line is validated when read: a corrupt, foreign or hostile
// line is skipped with a warning naming the file and line, and loses nothing else.
#pragma once

#include <string>
#include <vector>

#include "records/record.h"

namespace ansor {

class TuningCache {
 public:
  explicit TuningCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  // The file holding records of a target.
  std::string file_for(const std::string& target) const;

  // Appends a record to its target's file. Throws std::runtime_error on I/O failure.
  void append(const Record& record) const;

  struct Loaded {
    std::vector<Record> records;
    std::vector<std::string> warnings;  // "file:line: skipped: why"
  };
  // Every readable record of the target (none when it has no file). Throws std::runtime_error
  // when the file exists but cannot be opened.
  Loaded load(const std::string& target) const;

  // The targets the cache has records of: each file's target, as its first readable record
  // names it, sorted.
  std::vector<std::string> targets() const;

 private:
  std::string dir_;
};

}  // namespace ansor
