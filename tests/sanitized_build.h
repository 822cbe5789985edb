// Whether a test program is built under AddressSanitizer or UndefinedBehaviorSanitizer, which
// make it several times slower: tests that sweep many seeds or points sweep fewer there, and the
// Release stage sweeps them all. Shared by the unit tests and the runtime's (C++17) tests.
#pragma once

namespace ansor_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
inline constexpr bool kSanitizedBuild = __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer);
#else
inline constexpr bool kSanitizedBuild = false;
#endif

}  // namespace ansor_test
