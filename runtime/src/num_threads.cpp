// The thread count that parallel loops use: the CPUs this process may run on, unless
// ANSOR_NUM_THREADS or ansor_set_num_threads say otherwise.
#include "ansor/runtime.h"
#include "num_threads.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

namespace {

using ansor::runtime::kMaxThreads;

// Set by ansor_set_num_threads; 0 means "use the default".
std::atomic<int> g_requested_threads{0};

// A positive decimal integer, optionally surrounded by spaces; anything else yields 0 so that a
// malformed ANSOR_NUM_THREADS falls back to the default instead of failing.
int parse_thread_count(const char* text) {
  if (text == nullptr)
    return 0;
  const int saved_errno = errno;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  const bool out_of_range = errno == ERANGE;
  errno = saved_errno;
  if (end == text || out_of_range)
    return 0;
  while (std::isspace(static_cast<unsigned char>(*end)))
    ++end;
  if (*end != '\0' || value <= 0)
    return 0;
  return static_cast<int>(std::min<long>(value, kMaxThreads));
}

// Computed once, at first use, so the environment is read before any loop runs and never again.
int default_num_threads() {
  static const int count = [] {
    const int from_env = parse_thread_count(std::getenv("ANSOR_NUM_THREADS"));
    return from_env > 0 ? from_env : std::min(ansor::runtime::available_cpus(), kMaxThreads);
  }();
  return count;
}

} // namespace

// CPUs in the affinity mask, so that a process confined by taskset or a container's cpuset does
// not oversubscribe the cores it actually has.
int ansor::runtime::available_cpus() {
  static const int count = [] {
#ifdef __linux__
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
      return CPU_COUNT(&cpus);
#endif
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware > 0 ? static_cast<int>(hardware) : 1;
  }();
  return count;
}

int ansor_get_num_threads(void) {
  const int requested = g_requested_threads.load(std::memory_order_relaxed);
  return requested > 0 ? requested : default_num_threads();
}

void ansor_set_num_threads(int num_threads) {
  g_requested_threads.store(num_threads > 0 ? std::min(num_threads, kMaxThreads) : 0,
                            std::memory_order_relaxed);
}
