// Line-oriented children: an answer, and each way of giving none reported as its kind (timed
// out, killed by a signal, exited) rather than as text to match.
#include "measure/process.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace ansor {
namespace {

TEST(MeasureProcessTest, AnswersALine) {
  LineProcess child({"sh", "-c", "read line; echo \"got $line\"; sleep 5"});
  ProcessFailure failure;
  std::optional<std::string> answer = child.request("hello", 5, failure);
  ASSERT_TRUE(answer.has_value()) << failure.message;
  EXPECT_EQ(*answer, "got hello");
}

TEST(MeasureProcessTest, AChildThatSleepsTimesOut) {
  LineProcess child({"sh", "-c", "sleep 30"});
  ProcessFailure failure;
  EXPECT_FALSE(child.request("work", 0.3, failure).has_value());
  EXPECT_EQ(failure.kind, ProcessFailure::Kind::TimedOut);
  EXPECT_NE(failure.message.find("did not answer"), std::string::npos) << failure.message;
  EXPECT_FALSE(child.running());
}

TEST(MeasureProcessTest, AChildThatKillsItselfReportsTheSignal) {
  LineProcess child({"sh", "-c", "read line; kill -SEGV $$"});
  ProcessFailure failure;
  EXPECT_FALSE(child.request("work", 5, failure).has_value());
  EXPECT_EQ(failure.kind, ProcessFailure::Kind::Signaled);
  EXPECT_EQ(failure.signal, SIGSEGV);
  EXPECT_FALSE(child.running());
}

TEST(MeasureProcessTest, AChildThatExitsReportsItsStatus) {
  LineProcess child({"sh", "-c", "read line; exit 3"});
  ProcessFailure failure;
  EXPECT_FALSE(child.request("work", 5, failure).has_value());
  EXPECT_EQ(failure.kind, ProcessFailure::Kind::Exited);
  EXPECT_EQ(failure.exit_code, 3);
}

TEST(MeasureProcessTest, ACommandsCpuTimeCountsTheChildrenItWaitedFor) {
  // The work is done by a child of the command's shell, as a compiler driver's linker is.
  std::vector<ProcessResult> results =
      run_processes({{"sh", "-c", "(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done); true"}, {"true"}}, 2, 60);
  ASSERT_TRUE(results[0].ok() && results[1].ok());
  EXPECT_GT(results[0].cpu_seconds, 0);
  EXPECT_GT(results[0].cpu_seconds, results[1].cpu_seconds);
}

}  // namespace
}  // namespace ansor
