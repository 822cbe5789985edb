// The host as a target: what the kernel compiler's -march=native means here, and the thread
// count. It runs the compiler, so it lives with measurement rather than in target/.
#pragma once

#include <string>

#include "measure/compiler.h"
#include "target/target.h"

namespace ansor {

// The host as the kernel compiler targets it with its flags (-march=native), using `threads`
// threads (0: the runtime's default, ANSOR_NUM_THREADS or all cores).
Target detect_host(const KernelCompiler& compiler, int threads = 0);

// "host" resolves to the host; a CPU name (x86-64-v3) to the target its -march builds for, with
// the host's threads and caches; anything else is parsed as a target string.
Target resolve_target(const std::string& text, const KernelCompiler& compiler);

}  // namespace ansor
