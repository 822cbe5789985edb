// Files of the repository that tests read (fixtures, real records), by their path from its root.
// A header of its own, with no layer of the generator, so that tests of any layer can use it.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ansor::test {

inline std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(ANSOR_SOURCE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << relative;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ansor::test
