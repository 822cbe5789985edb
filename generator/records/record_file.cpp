// Record files as text: tolerant parsing, whole reads, atomic replacement.
#include "records/record_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "support/file_lock.h"

namespace ansor {

RecordFileContents parse_record_text(std::string_view text, const std::string& path) {
  RecordFileContents out;
  size_t line_no = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    ++line_no;
    if (end == std::string_view::npos) {
      out.warnings.push_back(fmt::format("{}:{}: skipped: the line is incomplete (a writer was interrupted)", path, line_no));
      break;
    }
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      out.lines.push_back({record_from_line(line), std::string(line)});
    } catch (const RecordError& e) {
      out.warnings.push_back(fmt::format("{}:{}: skipped: {}", path, line_no, e.what()));
    }
  }
  return out;
}

std::string read_open_file(int fd, const std::string& path) {
  std::string text;
  char buf[1 << 16];
  for (off_t offset = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
}

std::optional<RecordFileContents> read_record_file(const std::string& path) {
  std::optional<LockedFile> file = LockedFile::open_existing(path, O_RDONLY, LockedFile::Mode::Shared);
  if (!file) return std::nullopt;
  return parse_record_text(read_open_file(file->fd(), path), path);
}

void write_all(int fd, const std::string& data, const std::string& path, const std::string& what) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

void replace_record_file(const std::string& path, const std::vector<std::string>& lines) {
  const std::string temp = fmt::format("{}.{}.tmp", path, ::getpid());
  auto fail = [&](const std::string& what) {
    int err = errno;
    std::remove(temp.c_str());
    throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
  };
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("write beside");
  std::string data;
  for (const std::string& line : lines) data += line + "\n";
  try {
    write_all(fd, data, temp, "write");
  } catch (const std::runtime_error&) {
    ::close(fd);
    std::remove(temp.c_str());
    throw;
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("flush the replacement of");
  }
  ::close(fd);
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail("replace");
}

}  // namespace ansor
