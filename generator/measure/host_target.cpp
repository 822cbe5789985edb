// Host detection through the kernel compiler.
#include "measure/host_target.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <thread>

#include "measure/cpu_variant.h"
#include "measure/process.h"

namespace ansor {

namespace {

// Whether a target of the vector ISA names the tensor feature it has (target.h: AVX-VNNI only
// on AVX2 targets).
bool names_feature(const std::string& isa, const std::string& feature) { return feature != "avxvnni" || isa == "avx2"; }

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
    // -march=native lists its features; a named CPU (x86-64-v3) implies them: the predefined
    // macros say what either enables.
    std::vector<std::string> features = cpu_features(c);
    auto has = [&](const char* feature) {
      return clang.find(fmt::format("\"+{}\"", feature)) != std::string::npos ||
             std::find(features.begin(), features.end(), feature) != features.end();
    };
    t.isa = has("avx512f") ? "avx512" : has("avx2") ? "avx2" : has("sse4.2") ? "sse4" : has("neon") ? "neon" : "generic";
    for (const std::string& f : tensor_feature_names())
      if (has(f.c_str()) && names_feature(t.isa, f)) t.tensor_features.push_back(f);
    return;
  }
  std::string gcc = run_command_output(shell_quote(c.path) + flags + " -Q --help=target 2>/dev/null");
  if (std::regex_search(gcc, m, std::regex("-march=\\s+(\\S+)"))) {
    t.cpu = m[1];
    auto has = [&](const char* option) { return std::regex_search(gcc, std::regex(fmt::format("-m{}\\s+\\[enabled\\]", option))); };
    t.isa = has("avx512f") ? "avx512" : has("avx2") ? "avx2" : has("sse4.2") ? "sse4" : "generic";
    for (const std::string& f : tensor_feature_names())
      if (has(f.c_str()) && names_feature(t.isa, f)) t.tensor_features.push_back(f);
    return;
  }
  t.cpu = "unknown";
  t.isa = "generic";
}

// How long the compiler may take to say whether it takes its flags (it preprocesses nothing).
constexpr double kFlagCheckSeconds = 60;

// The first line of the compiler's error for its flags ("error: unknown target CPU 'k8x'"),
// empty when it takes them.
std::string flags_refused(const KernelCompiler& c) {
  std::vector<std::string> command = {c.path};
  command.insert(command.end(), c.flags.begin(), c.flags.end());
  for (const char* arg : {"-E", "-x", "c++", "/dev/null", "-o", "/dev/null"}) command.push_back(arg);
  ProcessResult r = run_processes({command}, 1, kFlagCheckSeconds).front();
  if (r.ok()) return "";
  std::string first = r.output.substr(0, r.output.find('\n'));
  return first.empty() ? fmt::format("{} fails with these flags", c.path) : first;
}

// Whether code built for `given` is what `wanted` names: the thread count and caches aside,
// which no compiler flag decides.
bool same_code(const Target& given, const Target& wanted) {
  return given.arch == wanted.arch && given.cpu == wanted.cpu && given.isa_and_features() == wanted.isa_and_features();
}

}  // namespace

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
  if (is_cpu_name(text)) {
    KernelCompiler for_cpu = compiler;
    for_cpu.flags = flags_for_cpu(compiler.flags, text);
    return detect_host(for_cpu);
  }
  return parse_target(text);
}

std::vector<std::string> flags_for_target_string(const std::string& text, const KernelCompiler& compiler) {
  const Target wanted = parse_target(text);
  const Target here = detect_host(compiler);
  // Kernels are compiled and measured here: there is no cross-compiler to choose.
  if (wanted.arch != here.arch)
    throw std::invalid_argument(fmt::format("target {} is for {}, but this machine builds kernels for {}", text, wanted.arch, here.arch));
  if (same_code(here, wanted)) return compiler.flags;
  KernelCompiler named = compiler;
  named.flags = flags_for_cpu(compiler.flags, wanted.cpu);
  const std::string march = "-march=" + wanted.cpu;
  if (std::string why = flags_refused(named); !why.empty())
    throw std::invalid_argument(fmt::format("target {} names CPU {}: it is not this machine's own target ({}), and the compiler refuses {}: {}",
                                            text, wanted.cpu, here.to_string(), march, why));
  const Target given = detect_host(named);
  if (given.isa_and_features() != wanted.isa_and_features())
    throw std::invalid_argument(fmt::format("target {} names ISA {} but {} gives {} (this machine's own target is {})", text,
                                            wanted.isa_and_features(), march, given.isa_and_features(), here.to_string()));
  return named.flags;
}

}  // namespace ansor
