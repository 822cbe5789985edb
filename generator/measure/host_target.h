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

// "host" resolves to the host; anything else is parsed.
Target resolve_target(const std::string& text, const KernelCompiler& compiler);

}  // namespace ansor
