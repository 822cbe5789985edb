// flock-based file locks.
#include "support/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
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

bool LockedFile::still_at_path(int fd, const std::string& path) {
  struct stat held, named;
  if (::fstat(fd, &held) != 0) throw std::runtime_error(fmt::format("cannot stat '{}': {}", path, std::strerror(errno)));
  return ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

LockedFile::LockedFile(const std::string& path, int open_flags, Mode mode, mode_t permissions) : fd_(-1) {
  for (;;) {
    fd_ = open_fd(path, open_flags, permissions);
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    lock(fd_, path, mode);
    if (still_at_path(fd_, path)) return;
    ::close(fd_);
  }
}

std::optional<LockedFile> LockedFile::open_existing(const std::string& path, int open_flags, Mode mode) {
  for (;;) {
    int fd = open_fd(path, open_flags & ~O_CREAT, 0);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    }
    lock(fd, path, mode);
    if (still_at_path(fd, path)) return LockedFile(fd);
    ::close(fd);
  }
}

LockedFile::~LockedFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ansor
