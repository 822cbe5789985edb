// The one rule of which records serve a build or a tuning run on a target with a compiler: the
// emitter (record_filter.h's best records), the tuner (schedules already tried) and the cost
// model (what it learns from) all ask it.
//
// Targets: the exact target beats the same CPU model (another thread count), which beats the
// same vector ISA (another CPU model); records of another ISA serve nothing. Compilers: records
// replay when the compiler is the same family (clang, gcc, nvcc, ...) of the same major version
// with the same flags after normalisation (compiler_identity.h); an exact match beats the same
// flags in another form, which beats another minor version. Every step down from an exact match
// is said in one line (step_down_note). Records of another compiler version or flags do not
// replay (the code may differ) but still teach the cost model, which learns schedules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ansor {

// Best first.
enum class TargetMatch : uint8_t { Exact, SameCpu, SameIsa, Other };
enum class CompilerMatch : uint8_t { Exact, SameFlags, SameMajor, Other };

// How a record's target relates to the run's (target strings; one that does not parse is Other
// unless the two are equal).
TargetMatch match_target(const std::string& record_target, const std::string& run_target);
// How a record's compiler relates to the run's (KernelCompiler::identity() texts).
CompilerMatch match_compiler(std::string_view record_compiler, std::string_view run_compiler);

inline bool replays(CompilerMatch m) { return m != CompilerMatch::Other; }
// Whether records of a target teach the cost model of the run's target (whatever the compiler).
inline bool trains(TargetMatch m) { return m != TargetMatch::Other; }

// The targets among `targets` (a cache's) whose records serve `target`, best first: the target
// itself (whether or not the cache has it), then the same CPU model, then the same ISA with the
// same thread count, then the rest of that ISA, each by name.
std::vector<std::string> serving_targets(const std::vector<std::string>& targets, const std::string& target);

// The one line saying how the records a kernel replays step down from an exact match, or
// empty when they do not.
std::string step_down_note(const std::string& kernel, const std::string& run_target, const std::string& record_target,
                           std::string_view run_compiler, std::string_view record_compiler);

}  // namespace ansor
