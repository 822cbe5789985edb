// Marks the threads that are running a chunk of a parallel loop, so that a loop started from
// inside one runs inline instead of waiting for a pool that is busy running its caller.
#ifndef ANSOR_RUNTIME_SRC_PARALLEL_REGION_H
#define ANSOR_RUNTIME_SRC_PARALLEL_REGION_H

namespace ansor::runtime {

inline thread_local bool t_in_parallel_region = false;

// Marks the current thread for the lifetime of the scope; restores the previous state so that
// nested scopes (a custom backend running chunks on its caller) unwind correctly.
class ParallelRegionScope {
public:
  ParallelRegionScope() : was_in_region_(t_in_parallel_region) { t_in_parallel_region = true; }
  ~ParallelRegionScope() { t_in_parallel_region = was_in_region_; }
  ParallelRegionScope(const ParallelRegionScope&) = delete;
  ParallelRegionScope& operator=(const ParallelRegionScope&) = delete;

private:
  bool was_in_region_;
};

} // namespace ansor::runtime

#endif // ANSOR_RUNTIME_SRC_PARALLEL_REGION_H
