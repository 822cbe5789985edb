// Record files: locked whole-line appends, tolerant validated reads, best-record queries.
#include "records/cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "lower/lower.h"

namespace ansor {

namespace {

// Holds an flock on a file descriptor and closes it.
class LockedFile {
 public:
  LockedFile(const std::string& path, int flags, int lock) : fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
    if (fd_ < 0) return;
    while (::flock(fd_, lock) != 0 && errno == EINTR) {
    }
  }
  ~LockedFile() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("cannot append to '{}': {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string TuningCache::file_for(const std::string& target) const {
  std::string stem;
  for (char c : target) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '-';
  return (std::filesystem::path(dir_) / (stem + ".jsonl")).string();
}

void TuningCache::append(const Record& record) const {
  std::filesystem::create_directories(dir_);
  std::string path = file_for(record.target);
  LockedFile file(path, O_RDWR | O_APPEND | O_CREAT, LOCK_EX);
  if (file.fd() < 0) throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::string data = record_to_line(record) + "\n";
  // A writer killed mid-line left a line without its newline: close it, so that only that
  // torn line is lost and not the record appended after it.
  struct stat st;
  if (::fstat(file.fd(), &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(file.fd(), &last, 1, st.st_size - 1) == 1 && last != '\n') data = "\n" + data;
  }
  write_all(file.fd(), data, path);
}

TuningCache::Loaded TuningCache::load(const std::string& target) const {
  Loaded out;
  std::string path = file_for(target);
  LockedFile file(path, O_RDONLY, LOCK_SH);
  if (file.fd() < 0) return out;
  std::string text;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(file.fd(), buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  size_t line_no = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    ++line_no;
    if (end == std::string::npos) {
      out.warnings.push_back(fmt::format("{}:{}: skipped: the line is incomplete (a writer was interrupted)", path, line_no));
      break;
    }
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      out.records.push_back(record_from_line(line));
    } catch (const RecordError& e) {
      out.warnings.push_back(fmt::format("{}:{}: skipped: {}", path, line_no, e.what()));
    }
  }
  return out;
}

std::vector<ReplayedRecord> best_records(const std::vector<Record>& records, const std::shared_ptr<const ComputeDAG>& dag,
                                         const std::string& compiler, size_t k, std::vector<std::string>& warnings) {
  std::vector<const Record*> candidates;
  for (const Record& r : records)
    if (r.ok() && r.workload_key == dag->workload_key() && r.dag == dag->canonical_text() && r.compiler == compiler) candidates.push_back(&r);
  std::stable_sort(candidates.begin(), candidates.end(), [](const Record* a, const Record* b) { return a->seconds < b->seconds; });
  std::vector<ReplayedRecord> out;
  for (const Record* r : candidates) {
    if (out.size() >= k) break;
    try {
      State state = replay(dag, r->steps);
      lower_state(state, "check");
      out.push_back({*r, std::move(state)});
    } catch (const std::exception& e) {
      warnings.push_back(fmt::format("a record of '{}' does not apply and is ignored: {}", r->kernel, e.what()));
    }
  }
  return out;
}

}  // namespace ansor
