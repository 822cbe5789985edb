// Internal facts about threads shared by num_threads.cpp and the pool: the limit on the thread
// count and the number of CPUs available.
#ifndef ANSOR_RUNTIME_SRC_NUM_THREADS_H
#define ANSOR_RUNTIME_SRC_NUM_THREADS_H

namespace ansor::runtime {

// Upper bound on the thread count: larger requests (a typo in ANSOR_NUM_THREADS) are clamped
// rather than spawning thousands of threads. The pool packs chunk counts into 16 bits.
constexpr int kMaxThreads = 1024;

// The CPUs this process may run on (its affinity mask), counted once.
int available_cpus();

} // namespace ansor::runtime

#endif // ANSOR_RUNTIME_SRC_NUM_THREADS_H
