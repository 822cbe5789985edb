// Sanitizer settings the tests rely on, built into the test program so that plain `ctest`
// works under sanitizers without exporting options.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ANSOR_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ANSOR_TEST_SANITIZED 1
#endif
#endif

#ifdef ANSOR_TEST_SANITIZED
// The workspace tests check that impossible allocations return NULL, which the sanitizers'
// allocators otherwise report as errors.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

// The fork tests also start threads in the child of a multithreaded parent, which
// ThreadSanitizer refuses by default.
extern "C" const char* __tsan_default_options() {
  return "allocator_may_return_null=1:die_after_fork=0";
}
#endif
