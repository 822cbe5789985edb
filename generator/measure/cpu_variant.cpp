// Named CPU levels: their flags and the features they let kernels use.
#include "measure/cpu_variant.h"

#include <algorithm>
#include <sstream>

namespace ansor {

namespace {

// Predefined macro -> __builtin_cpu_supports name, for the features both clang (14 and later)
// and gcc can test at run time; and AVX-VNNI and AMX, which clang 14 cannot, and which the
// library dispatcher tests through CPUID itself (driver/library_dispatch.cpp). GCC names AMX's
// macros __AMX_TILE__, clang 14 __AMXTILE__.
constexpr std::pair<const char*, const char*> kFeatureMacros[] = {
    {"__SSE4_2__", "sse4.2"},           {"__POPCNT__", "popcnt"},           {"__AVX__", "avx"},
    {"__AVX2__", "avx2"},               {"__FMA__", "fma"},                 {"__BMI__", "bmi"},
    {"__BMI2__", "bmi2"},               {"__AVX512F__", "avx512f"},         {"__AVX512BW__", "avx512bw"},
    {"__AVX512DQ__", "avx512dq"},       {"__AVX512VL__", "avx512vl"},       {"__AVX512CD__", "avx512cd"},
    {"__AVX512VBMI__", "avx512vbmi"},   {"__AVX512VBMI2__", "avx512vbmi2"}, {"__AVX512VNNI__", "avx512vnni"},
    {"__AVX512BITALG__", "avx512bitalg"}, {"__AVX512VPOPCNTDQ__", "avx512vpopcntdq"}, {"__AVX512IFMA__", "avx512ifma"},
    {"__AVX512BF16__", "avx512bf16"},   {"__GFNI__", "gfni"},               {"__VPCLMULQDQ__", "vpclmulqdq"},
    {"__AVXVNNI__", "avxvnni"},
    {"__AMX_BF16__", "amx-bf16"},       {"__AMXBF16__", "amx-bf16"},        {"__AMX_INT8__", "amx-int8"},
    {"__AMXINT8__", "amx-int8"},        {"__AMX_TILE__", "amx-tile"},       {"__AMXTILE__", "amx-tile"},
};

}  // namespace

bool is_cpu_name(const std::string& target) {
  return !target.empty() && target != "host" && target != "cuda" && target.find(':') == std::string::npos;
}

std::vector<std::string> flags_for_cpu(const std::vector<std::string>& flags, const std::string& cpu) {
  if (!is_cpu_name(cpu)) return flags;
  std::vector<std::string> out;
  bool replaced = false;
  for (const std::string& f : flags) {
    if (f == "-march=native" || f == "-mcpu=native") {
      out.push_back("-march=" + cpu);
      replaced = true;
    } else if (f.rfind("-march=", 0) == 0 || f.rfind("-mcpu=", 0) == 0) {
      continue;  // another CPU choice would contradict the target
    } else {
      out.push_back(f);
    }
  }
  if (!replaced) out.push_back("-march=" + cpu);
  return out;
}

std::vector<std::string> cpu_features(const KernelCompiler& compiler) {
  std::string flags;
  for (const std::string& f : compiler.flags) flags += " " + shell_quote(f);
  std::string macros = run_command_output(shell_quote(compiler.path) + flags + " -dM -E -x c++ /dev/null 2>/dev/null");
  std::vector<std::string> out;
  std::istringstream lines(macros);
  std::string line;
  std::vector<std::string> defined;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string define, name;
    if (words >> define >> name && define == "#define") defined.push_back(name);
  }
  for (const auto& [macro, feature] : kFeatureMacros)
    if (std::find(defined.begin(), defined.end(), macro) != defined.end() && std::find(out.begin(), out.end(), feature) == out.end())
      out.push_back(feature);
  return out;
}

std::vector<std::string> missing_features(const std::vector<std::string>& needed, const std::vector<std::string>& available) {
  std::vector<std::string> out;
  for (const std::string& f : needed)
    if (std::find(available.begin(), available.end(), f) == available.end()) out.push_back(f);
  return out;
}

}  // namespace ansor
