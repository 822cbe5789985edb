// Record files: locked whole-line appends, tolerant validated reads.
#include "records/cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "records/record_file.h"
#include "support/file_lock.h"
#include "support/file_name.h"

namespace ansor {

std::string TuningCache::file_for(const std::string& target) const {
  return (std::filesystem::path(dir_) / (file_name_stem(target) + ".jsonl")).string();
}

void TuningCache::append(const Record& record) const {
  std::filesystem::create_directories(dir_);
  std::string path = file_for(record.target);
  LockedFile file(path, O_RDWR | O_APPEND | O_CREAT, LockedFile::Mode::Exclusive);
  std::string data = record_to_line(record) + "\n";
  // A writer killed mid-line left a line without its newline: close it, so that only that
  // torn line is lost and not the record appended after it.
  struct stat st;
  if (::fstat(file.fd(), &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(file.fd(), &last, 1, st.st_size - 1) == 1 && last != '\n') data = "\n" + data;
  }
  write_all(file.fd(), data, path, "append to");
  if (auto it = index_->targets.find(record.target); it != index_->targets.end()) {
    it->second.by_workload.emplace(record.workload_key, it->second.loaded.records.size());
    it->second.loaded.records.push_back(record);
  }
  if (index_->names && !std::binary_search(index_->names->begin(), index_->names->end(), record.target)) {
    index_->names->push_back(record.target);
    std::sort(index_->names->begin(), index_->names->end());
  }
}

namespace {

TuningCache::Loaded read_records(const std::string& path) {
  TuningCache::Loaded out;
  std::optional<RecordFileContents> contents = read_record_file(path);
  if (!contents) return out;
  for (RecordLine& line : contents->lines) out.records.push_back(std::move(line.record));
  out.warnings = std::move(contents->warnings);
  return out;
}

}  // namespace

const TuningCache::TargetRecords& TuningCache::loaded(const std::string& target) const {
  auto it = index_->targets.find(target);
  if (it != index_->targets.end()) return it->second;
  TargetRecords read{read_records(file_for(target)), {}};
  for (size_t i = 0; i < read.loaded.records.size(); ++i) read.by_workload.emplace(read.loaded.records[i].workload_key, i);
  return index_->targets.emplace(target, std::move(read)).first->second;
}

TuningCache::Loaded TuningCache::load(const std::string& target) const { return loaded(target).loaded; }

std::vector<std::string> TuningCache::warnings(const std::string& target) const { return loaded(target).loaded.warnings; }

std::vector<Record> TuningCache::load(const std::string& target, const std::string& workload_key) const {
  const TargetRecords& t = loaded(target);
  std::vector<size_t> positions;
  auto [begin, end] = t.by_workload.equal_range(workload_key);
  for (auto it = begin; it != end; ++it) positions.push_back(it->second);
  std::sort(positions.begin(), positions.end());
  std::vector<Record> out;
  for (size_t i : positions) out.push_back(t.loaded.records[i]);
  return out;
}

std::vector<std::string> TuningCache::targets() const {
  if (index_->names) return *index_->names;
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      try {
        out.push_back(record_from_line(line).target);
        break;
      } catch (const RecordError&) {
        // A torn or foreign line: the next one may name the target.
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  index_->names = out;
  return out;
}

}  // namespace ansor
