// Target strings and host detection through the kernel compiler.
#include "measure/target.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>
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

int default_threads() {
  if (const char* env = std::getenv("ANSOR_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The CPU name and vector ISA that -march=native selects, asked of the compiler itself.
void query_native(const KernelCompiler& c, Target& t) {
  std::string flags;
  for (auto& f : c.flags) flags += " " + shell_quote(f);
  std::string clang = run_command_output(shell_quote(c.path) + flags + " -### -x c++ -c /dev/null -o /dev/null 2>&1");
  std::smatch m;
  if (std::regex_search(clang, m, std::regex("\"-target-cpu\" \"([^\"]+)\""))) {
    t.cpu = m[1];
    auto has = [&](const char* feature) { return clang.find(fmt::format("\"+{}\"", feature)) != std::string::npos; };
    t.isa = has("avx512f") ? "avx512" : has("avx2") ? "avx2" : has("sse4.2") ? "sse4" : has("neon") ? "neon" : "generic";
    return;
  }
  std::string gcc = run_command_output(shell_quote(c.path) + flags + " -Q --help=target 2>/dev/null");
  if (std::regex_search(gcc, m, std::regex("-march=\\s+(\\S+)"))) {
    t.cpu = m[1];
    auto has = [&](const char* option) { return std::regex_search(gcc, std::regex(fmt::format("-m{}\\s+\\[enabled\\]", option))); };
    t.isa = has("avx512f") ? "avx512" : has("avx2") ? "avx2" : has("sse4.2") ? "sse4" : "generic";
    return;
  }
  t.cpu = "unknown";
  t.isa = "generic";
}

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

Target detect_host(const KernelCompiler& compiler, int threads) {
  Target t;
#if defined(__x86_64__)
  t.arch = "x86_64";
#elif defined(__aarch64__)
  t.arch = "aarch64";
#else
  t.arch = "unknown";
#endif
  query_native(compiler, t);
  t.threads = threads > 0 ? threads : default_threads();
  t.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  t.l1d_bytes = std::max(0L, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  t.l2_bytes = std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE));
  t.l3_bytes = std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE));
  return t;
}

Target resolve_target(const std::string& text, const KernelCompiler& compiler) {
  if (text.empty() || text == "host") return detect_host(compiler);
  return parse_target(text);
}

}  // namespace ansor
