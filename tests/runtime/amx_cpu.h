// What the AMX tests ask of the CPU and the OS themselves, apart from the runtime they test:
// CPUID's AMX features, whether the OS saves the tiles' state, the Linux version.
#ifndef ANSOR_TESTS_RUNTIME_AMX_CPU_H
#define ANSOR_TESTS_RUNTIME_AMX_CPU_H

#include <cstdio>

#if defined(__linux__)
#include <sys/utsname.h>
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ansor_test {

// CPUID leaf 7, subleaf 0, EDX bits of the AMX features.
constexpr unsigned kAmxBf16Bit = 22;
constexpr unsigned kAmxTileBit = 24;
constexpr unsigned kAmxInt8Bit = 25;

// Whether CPUID leaf 7, subleaf 0 sets EDX bit `bit`.
inline bool cpuid_7_edx(unsigned bit) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> bit & 1u);
#else
  (void)bit;
  return false;
#endif
}

// Whether the OS has enabled the tiles' state in XCR0 (bit 17 XTILECFG, bit 18 XTILEDATA), read
// by XGETBV where CPUID says the OS enabled XSAVE (leaf 1, ECX bit 27), without which XGETBV
// faults.
inline bool os_saves_amx_state() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1u)) return false;
  unsigned low = 0, high = 0;
  __asm__ __volatile__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (low >> 17 & 3u) == 3u;
#else
  return false;
#endif
}

// Whether the running Linux kernel is at least major.minor (false on other systems).
inline bool linux_at_least(int major, int minor) {
#if defined(__linux__)
  utsname name{};
  int running_major = 0, running_minor = 0;
  if (uname(&name) != 0 || std::sscanf(name.release, "%d.%d", &running_major, &running_minor) != 2) return false;
  return running_major > major || (running_major == major && running_minor >= minor);
#else
  (void)major;
  (void)minor;
  return false;
#endif
}

}  // namespace ansor_test

#endif
