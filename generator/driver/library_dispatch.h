// A kernel library built for several CPU targets (ansor_add_kernels(... TARGETS host x86-64-v3
// x86-64-v4)), as Halide's multi-target libraries are: every kernel is emitted and compiled once
// per target, each target's kernels forming a complete library under the prefix LIB__VARIANT,
// and a dispatcher defines the library's C interface, forwarding each call to the variant the
// CPU runs that needs the most features. The choice is made once, at the first call, from
// __builtin_cpu_supports, and from CPUID for the features clang 14's lacks (AVX-VNNI, AMX); an
// AMX variant also needs the OS's tile state (XCR0) and the process's permission to use the
// tiles (the runtime's ansor_rt::request_amx_permission). The environment variable
// ANSOR_KERNEL_TARGET=<target as named in the build> forces a variant the CPU runs (to compare
// or test them). Packed const inputs follow the chosen variant's layout, since the pack
// functions dispatch the same way.
#pragma once

#include <string>
#include <vector>

#include "lang/program.h"

namespace ansor {

struct LibraryVariant {
  std::string target;                 // as the build names it: host, x86-64-v3
  std::string lib;                    // the variant's library prefix: LIB__host, LIB__x86_64_v3
  std::vector<std::string> features;  // the CPU features its code may use (measure/cpu_variant.h)
};

// LIB__<target as a C identifier>.
std::string variant_lib_name(const std::string& lib, const std::string& target);

// The dispatcher's source: the library's C interface over the variants, most demanding first.
std::string library_dispatcher(const Program& program, const std::string& lib, std::vector<LibraryVariant> variants);

}  // namespace ansor
