// The process's permission to use AMX tile data (tensor_intrinsics.h). Linux enables the tiles'
// large register state (XTILEDATA, 8 KiB) only for processes that ask for it, so that the
// signal frames of the others stay small; a tile instruction of a process that did not ask
// faults. The request is made once per process and its answer kept.
#include "ansor/tensor_intrinsics.h"

#include <atomic>
#include <cstdio>
#include <string>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace ansor_rt {

namespace {

// The answer to the request: an empty message when it was granted.
struct Permission {
  bool granted = false;
  std::string message;
};

std::string refusal(const std::string& why) {
  return "ansor: this kernel uses AMX tiles, but " + why + "; rebuild or choose a variant without AMX";
}

Permission ask() {
  Permission p;
#if defined(__linux__) && defined(__x86_64__)
  // arch_prctl's option and the feature's number in the XSAVE state (Linux's uapi asm/prctl.h and
  // the SDM), spelled here because older C libraries' headers lack them.
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0) {
    p.granted = true;
  } else {
    // std::strerror runs once, under the static initialisation that calls ask().
    p.message = refusal(std::string("Linux refused them (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): ") + std::strerror(errno) + ")");
  }
#else
  p.message = refusal("only Linux on x86-64 grants them to a process, and this runtime was built for another system");
#endif
  return p;
}

const Permission& permission() {
  static const Permission p = ask();
  return p;
}

}  // namespace

bool request_amx_permission() { return permission().granted; }

const char* amx_permission_error() { return permission().message.c_str(); }

void report_amx_refusal(const char* message) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) std::fprintf(stderr, "%s\n", message);
}

}  // namespace ansor_rt
