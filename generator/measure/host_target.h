// The host as a target: what the kernel compiler's -march=native means here, and the thread
// count. It runs the compiler, so it lives with measurement rather than in target/.
#pragma once

#include <string>
#include <vector>

#include "measure/compiler.h"
#include "target/target.h"

namespace ansor {

// The host as the kernel compiler targets it with its flags (-march=native), using `threads`
// threads (0: the runtime's default, ANSOR_NUM_THREADS or all cores).
Target detect_host(const KernelCompiler& compiler, int threads = 0);

// "host" resolves to the host; a CPU name (x86-64-v3) to the target its -march builds for, with
// the host's threads and caches; anything else is parsed as a target string.
Target resolve_target(const std::string& text, const KernelCompiler& compiler);

// The flags that build kernels for a CPU target string (cpu:ARCH:CPU:ISA:tN), from `compiler`
// with the user's or the default flags. Those flags as they are where they build for the CPU,
// ISA and tensor features the string names (this machine's own target with -march=native: its
// CPU field is the compiler's name for what -march=native selects, `x86-64` where it has none,
// which -march=x86-64 would not reproduce); else those flags with -march=CPU (flags_for_cpu),
// where the compiler knows that CPU and it gives the string's ISA and tensor features. Throws
// std::invalid_argument naming the target, what it asks for and what the flags give, for a
// string of another architecture than this machine's or one that no such flags build for.
std::vector<std::string> flags_for_target_string(const std::string& text, const KernelCompiler& compiler);

}  // namespace ansor
