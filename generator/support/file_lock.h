// Advisory whole-file locks (flock) held for the lifetime of an object: the record files'
// appends and reads, and the per-target measurement lock. A lock that cannot be taken is an
// error, never silently skipped: running unlocked would interleave records or measurements.
//
// A lock is always on the file the path names when it is granted: a file replaced (renamed over)
// or removed while a caller waited for its lock is opened again. A holder of the exclusive lock
// may therefore rewrite a file atomically by renaming a new one over it before unlocking
// (records/record_pool.h), and no waiting writer appends to the replaced file.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace ansor {

class LockedFile {
 public:
  enum class Mode { Shared, Exclusive };

  // Opens `path` with `open_flags` (O_CLOEXEC added; `permissions` when it is created) and
  // waits for the lock. Throws std::runtime_error naming the path and the system's reason.
  LockedFile(const std::string& path, int open_flags, Mode mode, mode_t permissions = 0644);
  // As above, but nullopt when the file does not exist.
  static std::optional<LockedFile> open_existing(const std::string& path, int open_flags, Mode mode);

  ~LockedFile();  // closing releases the lock
  LockedFile(LockedFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  LockedFile& operator=(LockedFile&&) = delete;
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  int fd() const { return fd_; }

 private:
  explicit LockedFile(int fd) : fd_(fd) {}
  static int open_fd(const std::string& path, int open_flags, mode_t permissions);
  static void lock(int fd, const std::string& path, Mode mode);
  // Whether `path` still names the file `fd` is open on.
  static bool still_at_path(int fd, const std::string& path);

  int fd_;
};

}  // namespace ansor
