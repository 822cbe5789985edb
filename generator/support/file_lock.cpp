// flock-based file locks.
#include "support/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ansor {

int LockedFile::open_fd(const std::string& path, int open_flags, mode_t permissions) {
  return ::open(path.c_str(), open_flags | O_CLOEXEC, permissions);
}

void LockedFile::lock(int fd, const std::string& path, Mode mode) {
  int op = mode == Mode::Exclusive ? LOCK_EX : LOCK_SH;
  while (::flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("cannot lock '{}': {}", path, std::strerror(err)));
  }
}

LockedFile::LockedFile(const std::string& path, int open_flags, Mode mode, mode_t permissions)
    : fd_(open_fd(path, open_flags, permissions)) {
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  lock(fd_, path, mode);
}

std::optional<LockedFile> LockedFile::open_existing(const std::string& path, int open_flags, Mode mode) {
  int fd = open_fd(path, open_flags & ~O_CREAT, 0);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  }
  lock(fd, path, mode);
  return LockedFile(fd);
}

LockedFile::~LockedFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ansor
