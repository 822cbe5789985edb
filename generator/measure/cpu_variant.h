// Kernels built for a named CPU level rather than for the build machine: `x86-64-v3` compiles
// with -march=x86-64-v3 where the host target compiles with -march=native, so that one library
// can hold a variant per CPU level and pick one at run time (driver/ library dispatch). The
// features a variant's code may use are those its compiler flags enable, asked of the compiler.
#pragma once

#include <string>
#include <vector>

#include "measure/compiler.h"

namespace ansor {

// Whether a --target names a CPU for -march (x86-64-v3, skylake-avx512, ...) rather than the
// host, the present GPU (cuda) or a full target string (cpu:ARCH:CPU:ISA:tN).
bool is_cpu_name(const std::string& target);

// The flags that build kernels for `cpu`: -march=native (or -mcpu=native) becomes -march=cpu;
// flags without either get -march=cpu appended. "host" and target strings leave the flags alone
// (a target string's are flags_for_target_string's, measure/host_target.h).
std::vector<std::string> flags_for_cpu(const std::vector<std::string>& flags, const std::string& cpu);

// The CPU features the compiler's flags let generated code use, as __builtin_cpu_supports
// names ("avx2", "avx512f", ..., and "avxvnni", "amx-bf16", "amx-int8", "amx-tile", which the
// dispatcher tests by CPUID), from the compiler's predefined macros. Features that compilers
// cannot test at run time (f16c, vaes) are left out: every CPU with the features listed here
// that this project meets has them too.
std::vector<std::string> cpu_features(const KernelCompiler& compiler);

// The features of `needed` missing from `available`.
std::vector<std::string> missing_features(const std::vector<std::string>& needed, const std::vector<std::string>& available);

}  // namespace ansor
