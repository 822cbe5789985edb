// The machine's streaming bandwidth at a working-set size, as the memory-bound benchmarks compare
// against: copies of half the working set by ansor's own copy kernel (tuned), by memcpy, and by a
// copy loop split over the runtime's threads; the best of the three is the bandwidth.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "bench_support.h"

namespace ansor::bench {

struct StreamingCopy {
  int64_t n = 0;  // floats copied
  std::unique_ptr<LoadedKernel> kernel;
  double ours = 0, libc = 0, loop = 0;  // seconds of one copy each way

  double bytes() const { return 8.0 * static_cast<double>(n); }  // read + written
  double best_gbs() const;
};

// Floats per copy for a working set of `bytes`, rounded up to whole cache lines, so that working
// sets of nearly the same size share one copy.
int64_t copy_floats(double bytes);

// The copies of a set of working-set sizes: each one's ansor kernel tuned to the budget of
// `options` (in `cache`), built and loaded, then all of them timed. Tuning and building come first
// so that no compile runs while anything is timed.
class StreamingCopies {
 public:
  void add(int64_t floats) { copies_.try_emplace(floats); }
  void build(Measurer& measurer, const TuningCache& cache, const TuneOptions& options, const std::string& work_dir);
  void time();
  // The copy added for `floats` (after time(): measured).
  const StreamingCopy& at(int64_t floats) const { return copies_.at(floats); }
  const std::map<int64_t, StreamingCopy>& all() const { return copies_; }
  // A Markdown table of every copy's times and bandwidth.
  std::string table() const;

 private:
  std::map<int64_t, StreamingCopy> copies_;
};

}  // namespace ansor::bench
