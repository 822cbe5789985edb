// File locks: a waiter whose file is replaced (renamed over) or removed while it waits locks the
// file the path names afterwards, never the replaced one.
#include "support/file_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ansor {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ansor_file_lock_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "records.jsonl").string();
    std::ofstream(path_) << "old\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A child process that waits for the exclusive lock of the path and appends `text` to the
  // file it then holds. It closes its copy of the parent's locked descriptor `held_fd`: the
  // lock belongs to the open file, which the copy would keep locked.
  pid_t append_in_child(const std::string& text, int held_fd) const {
    pid_t child = ::fork();
    if (child == 0) {
      ::close(held_fd);
      LockedFile file(path_, O_WRONLY | O_APPEND | O_CREAT, LockedFile::Mode::Exclusive);
      ::_exit(::write(file.fd(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : 1);
    }
    return child;
  }
  static void expect_exits_cleanly(pid_t child) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(FileLockTest, AWaiterLocksTheFileThatReplacedTheOneItWaitedFor) {
  pid_t child;
  {
    LockedFile held(path_, O_RDWR, LockedFile::Mode::Exclusive);
    child = append_in_child("appended\n", held.fd());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the child opened the old file and waits
    std::ofstream((dir_ / "new").string()) << "new\n";
    ASSERT_EQ(std::rename((dir_ / "new").c_str(), path_.c_str()), 0);
  }
  expect_exits_cleanly(child);
  EXPECT_EQ(contents(path_), "new\nappended\n");
}

TEST_F(FileLockTest, AWaiterForAFileRemovedMeanwhileCreatesItAgainOrFindsNone) {
  pid_t child;
  {
    LockedFile held(path_, O_RDWR, LockedFile::Mode::Exclusive);
    child = append_in_child("appended\n", held.fd());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fs::remove(path_);
  }
  expect_exits_cleanly(child);
  EXPECT_EQ(contents(path_), "appended\n");
  fs::remove(path_);
  EXPECT_FALSE(LockedFile::open_existing(path_, O_RDONLY, LockedFile::Mode::Shared).has_value());
}

}  // namespace
}  // namespace ansor
