// fork/exec with process groups, output capture, time limits, and line-oriented children.
#include "measure/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace ansor {

namespace {

constexpr size_t kMaxOutput = 64 * 1024;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Starts argv in a process group of its own with the given descriptors as stdin / stdout+stderr.
pid_t spawn(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int close_in_child) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
    ::dup2(stdout_fd, STDOUT_FILENO);
    ::dup2(stdout_fd, STDERR_FILENO);
    if (close_in_child >= 0) ::close(close_in_child);
    ::execvp(args[0], args.data());
    const char msg[] = "cannot execute the program\n";
    ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

void describe_status(int status, ProcessResult& r) {
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

struct Running {
  size_t index;
  pid_t pid;
  int out_fd;
  Clock::time_point start;
};

double cpu_seconds(const rusage& usage) {
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

std::vector<ProcessResult> run_processes(const std::vector<std::vector<std::string>>& commands, int parallel, double timeout_seconds) {
  std::vector<ProcessResult> results(commands.size());
  std::vector<Running> running;
  size_t next = 0;
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && static_cast<int>(running.size()) < std::max(1, parallel)) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe");
      pid_t pid = spawn(commands[next], -1, fds[1], fds[0]);
      ::close(fds[1]);
      ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
      running.push_back({next++, pid, fds[0], Clock::now()});
    }
    std::vector<pollfd> polls;
    for (auto& r : running) polls.push_back({r.out_fd, POLLIN, 0});
    ::poll(polls.data(), polls.size(), 20);
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      ProcessResult& res = results[r.index];
      char buf[4096];
      ssize_t n;
      while ((n = ::read(r.out_fd, buf, sizeof(buf))) > 0)
        if (res.output.size() < kMaxOutput) res.output.append(buf, std::min<size_t>(n, kMaxOutput - res.output.size()));
      int status = 0;
      rusage usage{};
      pid_t done = ::wait4(r.pid, &status, WNOHANG, &usage);
      bool late = seconds_since(r.start) > timeout_seconds;
      if (done == 0 && late) {
        kill_group(r.pid);
        ::wait4(r.pid, &status, 0, &usage);
        res.timed_out = true;
        done = r.pid;
      }
      if (done == r.pid) {
        while ((n = ::read(r.out_fd, buf, sizeof(buf))) > 0)
          if (res.output.size() < kMaxOutput) res.output.append(buf, std::min<size_t>(n, kMaxOutput - res.output.size()));
        if (!res.timed_out) describe_status(status, res);
        res.seconds = seconds_since(r.start);
        res.cpu_seconds = cpu_seconds(usage);
        ::close(r.out_fd);
        running.erase(running.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
  return results;
}

void LineProcess::start() {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe");
  pid_ = spawn(argv_, in[0], out[1], -1);
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  buffered_.clear();
  // A child that died must not kill us with SIGPIPE when we write to it.
  ::signal(SIGPIPE, SIG_IGN);
}

bool LineProcess::reap(ProcessFailure& failure) {
  failure = {ProcessFailure::Kind::Unreadable, 0, -1, "stopped answering"};
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  if (WIFSIGNALED(status)) {
    failure = {ProcessFailure::Kind::Signaled, WTERMSIG(status), -1,
               fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))};
  } else if (WIFEXITED(status)) {
    failure = {ProcessFailure::Kind::Exited, 0, WEXITSTATUS(status), fmt::format("exited with status {}", WEXITSTATUS(status))};
  }
  pid_ = -1;
  return true;
}

void LineProcess::stop() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    kill_group(pid_);
    int status;
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

std::optional<std::string> LineProcess::request(const std::string& line, double timeout_seconds, ProcessFailure& failure) {
  if (pid_ <= 0) start();
  std::string data = line + "\n";
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(to_child_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reap(failure);
      stop();
      return std::nullopt;
    }
    done += static_cast<size_t>(n);
  }
  Clock::time_point start = Clock::now();
  for (;;) {
    size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      std::string answer = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return answer;
    }
    double left = timeout_seconds - seconds_since(start);
    if (left <= 0) {
      failure = {ProcessFailure::Kind::TimedOut, 0, -1, fmt::format("did not answer within {:.1f} s", timeout_seconds)};
      stop();
      return std::nullopt;
    }
    pollfd p{from_child_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(from_child_, buf, sizeof(buf));
    if (n > 0) {
      buffered_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  // The child closed its output: it died. Wait briefly so its status says how.
  for (int i = 0; !reap(failure) && pid_ > 0 && i < 100; ++i) ::usleep(10000);
  stop();
  return std::nullopt;
}

}  // namespace ansor
