// Counts the program's calls to global operator new, so tests can check that code they run
// performs no heap allocation. allocation_counter.cpp replaces the global allocation functions.
#ifndef ANSOR_TESTS_RUNTIME_ALLOCATION_COUNTER_H
#define ANSOR_TESTS_RUNTIME_ALLOCATION_COUNTER_H

#include <cstdint>

namespace ansor_test {

// False where the allocation functions cannot be replaced (ThreadSanitizer's runtime defines
// them too); heap_allocations() then stays 0.
bool heap_allocations_counted();

// Calls to global operator new so far, from any thread.
uint64_t heap_allocations();

} // namespace ansor_test

#endif // ANSOR_TESTS_RUNTIME_ALLOCATION_COUNTER_H
