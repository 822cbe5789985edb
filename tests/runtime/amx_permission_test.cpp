// The process's permission to use AMX tiles, asked of the real OS (no emulation): granted
// exactly where the CPU has AMX and Linux 5.16 or later enables it, refused elsewhere with a
// message that says what failed and why; asked once per process, whichever threads ask.
#include "ansor/tensor_intrinsics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "amx_cpu.h"

namespace {

TEST(AmxPermission, IsGrantedExactlyWhereTheCpuAndLinuxHaveAmx) {
  const bool expected = ansor_test::cpuid_7_edx(ansor_test::kAmxTileBit) && ansor_test::os_saves_amx_state() &&
                        ansor_test::linux_at_least(5, 16);
  const bool granted = ansor_rt::request_amx_permission();
  EXPECT_EQ(granted, expected);
  const std::string message = ansor_rt::amx_permission_error();
  if (granted) {
    EXPECT_EQ(message, "");
    return;
  }
  EXPECT_EQ(message.rfind("ansor: this kernel uses AMX tiles, but ", 0), 0u) << message;
  EXPECT_NE(message.find("; rebuild or choose a variant without AMX"), std::string::npos) << message;
#if defined(__linux__) && defined(__x86_64__)
  // The errno text, as the same request made here again gets it (asking twice changes nothing).
  errno = 0;
  ASSERT_NE(syscall(SYS_arch_prctl, 0x1023, 18), 0);
  const std::string reason = std::string("Linux refused them (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): ") + std::strerror(errno) + ")";
  EXPECT_NE(message.find(reason), std::string::npos) << message << "\nlacks: " << reason;
#endif
}

TEST(AmxPermission, ThreadsAskingAtOnceAgreeAndTheAnswerIsKept) {
  constexpr int kThreads = 8;
  std::atomic<int> waiting{kThreads};
  bool granted[kThreads] = {};
  const char* messages[kThreads] = {};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      // All ask at once: the first request of the process races with the others.
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();
      granted[i] = ansor_rt::request_amx_permission();
      messages[i] = ansor_rt::amx_permission_error();
    });
  for (std::thread& t : threads) t.join();
  for (int i = 1; i < kThreads; ++i) {
    EXPECT_EQ(granted[i], granted[0]) << i;
    EXPECT_EQ(messages[i], messages[0]) << "thread " << i << " got another message: the answer was not kept";
  }
  EXPECT_EQ(ansor_rt::request_amx_permission(), granted[0]);
  EXPECT_EQ(ansor_rt::amx_permission_error(), messages[0]);
}

TEST(AmxPermission, ARefusalIsReportedOncePerProcess) {
  testing::internal::CaptureStderr();
  ansor_rt::report_amx_refusal("ansor: first");
  ansor_rt::report_amx_refusal("ansor: second");
  std::thread([] { ansor_rt::report_amx_refusal("ansor: third"); }).join();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "ansor: first\n");
}

}  // namespace
