// Target strings.
#include "target/target.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "support/file_name.h"

namespace ansor {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool is_name(const std::string& s) { return std::regex_match(s, std::regex("[A-Za-z0-9_.-]+")); }

}  // namespace

int Target::vector_bits() const {
  if (isa == "avx512") return 512;
  if (isa == "avx2") return 256;
  if (isa == "sse4" || isa == "neon") return 128;
  return 128;
}

std::string Target::to_string() const {
  if (kind == Kind::Cuda) return "cuda:" + cpu;
  return fmt::format("cpu:{}:{}:{}:t{}", arch, cpu, isa, threads);
}

std::string Target::file_stem() const { return file_name_stem(to_string()); }

Target parse_target(const std::string& text) {
  std::vector<std::string> parts = split(text, ':');
  Target t;
  auto fail = [&](const std::string& why) -> Target {
    throw std::invalid_argument(fmt::format("invalid target '{}': {} (expected host, cuda:sm_XX or cpu:ARCH:CPU:ISA:tTHREADS)", text, why));
  };
  if (parts.empty()) return fail("empty");
  if (parts[0] == "cuda") {
    if (parts.size() != 2 || !std::regex_match(parts[1], std::regex("sm_[0-9]+"))) return fail("a CUDA target names its architecture");
    t.kind = Target::Kind::Cuda;
    t.arch = "nvptx";
    t.cpu = parts[1];
    t.isa = "cuda";
    return t;
  }
  if (parts[0] != "cpu" || parts.size() != 5) return fail("unknown form");
  for (int i = 1; i <= 3; ++i)
    if (!is_name(parts[i])) return fail(fmt::format("'{}' is not a name", parts[i]));
  if (!std::regex_match(parts[4], std::regex("t[1-9][0-9]{0,3}"))) return fail("the thread count must look like t2");
  t.arch = parts[1];
  t.cpu = parts[2];
  t.isa = parts[3];
  t.threads = std::stoi(parts[4].substr(1));
  return t;
}

}  // namespace ansor
