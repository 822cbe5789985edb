// Target strings.
#include "target/target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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

struct ArchLimits {
  const char* sm;
  int sm_count;
  int64_t max_shared_bytes_per_block;
  int max_threads_per_sm;
  int64_t l2_bytes;
};

// From NVIDIA's CUDA C++ Programming Guide (compute capabilities table) and the data sheets of
// each architecture's largest part: T4, A100, A40 / RTX 3090, L40 / RTX 4090, H100 SXM. Every
// one allows 1024 threads and 64 Ki registers per block, 255 registers per thread.
constexpr ArchLimits kArchLimits[] = {
    {"sm_75", 40, 64 * 1024, 1024, 4 << 20},
    {"sm_80", 108, 163 * 1024, 2048, 40 << 20},
    {"sm_86", 84, 99 * 1024, 1536, 6 << 20},
    {"sm_89", 142, 99 * 1024, 1536, 96 << 20},
    {"sm_90", 132, 227 * 1024, 2048, 50 << 20},
};

}  // namespace

std::optional<GpuLimits> gpu_limits_of_arch(const std::string& sm) {
  for (const ArchLimits& a : kArchLimits) {
    if (sm != a.sm) continue;
    GpuLimits limits;
    limits.sm_count = a.sm_count;
    limits.max_shared_bytes_per_block = a.max_shared_bytes_per_block;
    limits.max_threads_per_sm = a.max_threads_per_sm;
    limits.l2_bytes = a.l2_bytes;
    return limits;
  }
  return std::nullopt;
}

bool GpuLimits::reduces_across(int64_t threads) const {
  if (threads < 1 || threads > max_threads_per_block) return false;
  if (threads <= warp_size) return (threads & (threads - 1)) == 0;
  return threads % warp_size == 0;
}

std::vector<std::string> known_gpu_archs() {
  std::vector<std::string> out;
  for (const ArchLimits& a : kArchLimits) out.push_back(a.sm);
  return out;
}

const std::vector<std::string>& tensor_feature_names() {
  static const std::vector<std::string> names = {"amx-bf16", "amx-int8", "amx-tile", "avx512bf16", "avx512vnni", "avxvnni"};
  return names;
}

bool Target::has_tensor_feature(const std::string& name) const {
  return std::find(tensor_features.begin(), tensor_features.end(), name) != tensor_features.end();
}

bool Target::same_isa(const Target& other) const {
  if (kind != other.kind || arch != other.arch || isa != other.isa) return false;
  for (const std::string& f : tensor_features)
    if (!other.has_tensor_feature(f)) return false;
  return true;
}

int Target::vector_bits() const {
  if (isa == "avx512") return 512;
  if (isa == "avx2") return 256;
  if (isa == "sse4" || isa == "neon") return 128;
  return 128;
}

std::string Target::isa_and_features() const {
  std::string out = isa;
  for (const std::string& f : tensor_features) out += "+" + f;
  return out;
}

std::string Target::to_string() const {
  if (kind == Kind::Cuda) return "cuda:" + cpu;
  return fmt::format("cpu:{}:{}:{}:t{}", arch, cpu, isa_and_features(), threads);
}

std::string Target::file_stem() const { return file_name_stem(to_string()); }

Target parse_target(const std::string& text) {
  std::vector<std::string> parts = split(text, ':');
  Target t;
  auto fail = [&](const std::string& why) -> Target {
    throw std::invalid_argument(fmt::format("invalid target '{}': {} (expected host, cuda, cuda:sm_XX or cpu:ARCH:CPU:ISA:tTHREADS)", text, why));
  };
  if (parts.empty()) return fail("empty");
  if (parts[0] == "cuda") {
    if (parts.size() != 2 || !std::regex_match(parts[1], std::regex("sm_[0-9]+"))) return fail("a CUDA target names its architecture");
    std::optional<GpuLimits> limits = gpu_limits_of_arch(parts[1]);
    if (!limits) return fail(fmt::format("unknown CUDA architecture; known: {}", fmt::join(known_gpu_archs(), ", ")));
    t.gpu = *limits;
    t.kind = Target::Kind::Cuda;
    t.arch = "nvptx";
    t.cpu = parts[1];
    t.isa = "cuda";
    return t;
  }
  if (parts[0] != "cpu" || parts.size() != 5) return fail("unknown form");
  for (int i = 1; i <= 2; ++i)
    if (!is_name(parts[i])) return fail(fmt::format("'{}' is not a name", parts[i]));
  if (!std::regex_match(parts[4], std::regex("t[1-9][0-9]{0,3}"))) return fail("the thread count must look like t2");
  t.arch = parts[1];
  t.cpu = parts[2];
  std::vector<std::string> isa_parts = split(parts[3], '+');
  if (!std::regex_match(parts[3], std::regex("[A-Za-z0-9_.-]+(\\+[A-Za-z0-9_.-]+)*")))
    return fail(fmt::format("'{}' is not a vector ISA with tensor features (avx512+avx512vnni)", parts[3]));
  t.isa = isa_parts[0];
  const std::vector<std::string>& known = tensor_feature_names();
  for (size_t i = 1; i < isa_parts.size(); ++i) {
    if (std::find(known.begin(), known.end(), isa_parts[i]) == known.end())
      return fail(fmt::format("unknown tensor feature '{}'; known: {}", isa_parts[i], fmt::join(known, ", ")));
    t.tensor_features.push_back(isa_parts[i]);
  }
  // One spelling per target: the features in the table's order, each once.
  std::vector<std::string> ordered;
  for (const std::string& f : known)
    if (t.has_tensor_feature(f)) ordered.push_back(f);
  if (ordered != t.tensor_features) return fail(fmt::format("tensor features must be listed once each, in the order {}", fmt::join(known, "+")));
  t.threads = std::stoi(parts[4].substr(1));
  return t;
}

}  // namespace ansor
