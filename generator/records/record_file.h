// A record file as text: parsing every line of it with the line kept as written, and replacing
// it whole. The cache's reads (cache.h) and the pooling of records (record_pool.h) share these,
// so that a line is readable to one exactly when it is to the other.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/record.h"

namespace ansor {

// A readable line of a record file: the record and the line as written (without its newline).
struct RecordLine {
  Record record;
  std::string text;
};

struct RecordFileContents {
  std::vector<RecordLine> lines;
  std::vector<std::string> warnings;  // "file:line: skipped: why", for each line not read
};

// The records of a file's text; `path` names the file in the warnings. A last line without its
// newline is a torn append and is skipped.
RecordFileContents parse_record_text(std::string_view text, const std::string& path);

// The whole content of an open file, from its start. Throws std::runtime_error naming `path`.
std::string read_open_file(int fd, const std::string& path);

// The records of the file at `path`, read under its shared lock; nullopt when it does not exist.
// Throws std::runtime_error when it exists but cannot be opened or read.
std::optional<RecordFileContents> read_record_file(const std::string& path);

// Writes all of `data` to `fd` (retrying interrupted and partial writes). Throws
// std::runtime_error naming `path` and `what` was being done.
void write_all(int fd, const std::string& data, const std::string& path, const std::string& what);

// Replaces the file at `path` by one holding `lines` (each followed by a newline), atomically:
// written beside it, flushed to disk, then renamed over it. The caller holds the exclusive lock
// of the file (support/file_lock.h), whose waiters then lock the new file. Throws
// std::runtime_error naming the path.
void replace_record_file(const std::string& path, const std::vector<std::string>& lines);

}  // namespace ansor
