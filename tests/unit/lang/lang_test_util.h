// Helpers shared by the kernels.def front-end tests: programs from strings, and checks that a
// program is rejected at an exact place with a given message.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "lang/program.h"

namespace ansor::test {

inline std::shared_ptr<const SourceFile> source(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->path = "test.def";
  file->text = text;
  return file;
}

inline Program load(const std::string& text) { return load_program(source(text)); }

// The only kernel of a program that must load.
inline Kernel load_kernel(const std::string& text) {
  Program program = load(text);
  if (program.kernels.size() != 1) throw std::logic_error("expected exactly one kernel");
  return program.kernels.front();
}

// Succeeds when loading `text` throws a CompileError at line:column whose message contains
// `fragment`; used as EXPECT_TRUE(fails_at(...)) so that a failure names the test's line.
inline ::testing::AssertionResult fails_at(const std::string& text, int line, int column, const std::string& fragment) {
  try {
    load(text);
  } catch (const CompileError& error) {
    bool ok = error.loc().valid() && error.loc().line == line && error.loc().column == column &&
              error.message().find(fragment) != std::string::npos;
    if (ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "error at " << error.loc().line << ":" << error.loc().column << ": "
                                         << error.message() << "\nexpected at " << line << ":" << column << " containing \""
                                         << fragment << "\"";
  }
  return ::testing::AssertionFailure() << "no error for:\n" << text;
}

// The operation of a kernel by name; fails the test when it does not exist.
inline const Operation& op_named(const Kernel& kernel, const std::string& name) {
  int i = kernel.dag.find(name);
  if (i < 0) throw std::logic_error("no operation named " + name);
  return kernel.dag.op(i);
}

// The operation names of a kernel in order.
inline std::vector<std::string> op_names(const Kernel& kernel) {
  std::vector<std::string> names;
  for (const OpPtr& op : kernel.dag.ops()) names.push_back(op->name);
  return names;
}

inline std::vector<std::string> names_of(const Kernel& kernel, const std::vector<int>& indices) {
  std::vector<std::string> names;
  for (int i : indices) names.push_back(kernel.dag.op(i).name);
  return names;
}

inline std::string body_of(const Kernel& kernel, const std::string& name) { return to_string(op_named(kernel, name).body); }

}  // namespace ansor::test
