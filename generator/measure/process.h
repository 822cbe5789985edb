// Child processes for measurement: compilers run to completion under a time limit, and the
// measurement worker is a long-lived child spoken to by lines over pipes. A child that runs too
// long is killed with its whole process group.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ansor {

struct ProcessResult {
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string output;  // standard output and error, at most 64 KiB
  double seconds = 0;
  double cpu_seconds = 0;  // user and system time of the process and the children it waited for

  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

// Runs the commands, at most `parallel` at a time, each limited to timeout_seconds. Throws
// std::runtime_error when a process cannot be started at all.
std::vector<ProcessResult> run_processes(const std::vector<std::vector<std::string>>& commands, int parallel, double timeout_seconds);

// Why a line-oriented child gave no answer.
struct ProcessFailure {
  enum class Kind : uint8_t {
    TimedOut,    // no answer within the time limit
    Signaled,    // killed by a signal (`signal`)
    Exited,      // exited (`exit_code`)
    Unreadable,  // its pipes failed and its end could not be observed
  };
  Kind kind = Kind::Unreadable;
  int signal = 0;
  int exit_code = -1;
  std::string message;  // for people: "killed by signal 11 (Segmentation fault)"
};

// A child that reads requests from its standard input and answers each with one line.
class LineProcess {
 public:
  explicit LineProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  ~LineProcess() { stop(); }
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // Sends one line (started on first use) and waits up to timeout_seconds for the answer.
  // nullopt when the child died or did not answer in time; it is then stopped and `failure`
  // says how.
  std::optional<std::string> request(const std::string& line, double timeout_seconds, ProcessFailure& failure);
  void stop();
  bool running() const { return pid_ > 0; }

 private:
  void start();
  // Collects the child's status if it has ended; false while it runs.
  bool reap(ProcessFailure& failure);

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffered_;
};

}  // namespace ansor
