// The compiler that builds kernels, as tuning and builds see it: the same executable and flags
// compile the candidates that are measured and the library that ships, and both are part of a
// record's key.
#pragma once

#include <string>
#include <vector>

namespace ansor {

struct KernelCompiler {
  std::string path;                // as given (clang++, /usr/bin/g++-12, ...)
  std::vector<std::string> flags;  // optimisation and target flags (-O3 -march=native ...)
  std::string version;             // first line of `path --version`

  // "Debian clang version 14.0.6 -O3 -march=native ...": what records store
  // (records/compiler_identity.h reads it back).
  std::string identity() const;
  // Whether it is clang (which reads precompiled headers given with -include-pch).
  bool is_clang() const;
};

// The default flags of CPU kernels, for tuning and (written by `ansor-gen configure`) for the
// libraries of ansor_add_kernels() alike.
std::vector<std::string> default_kernel_flags();

// Finds clang++ (or the named compiler) and asks it for its version. Throws std::runtime_error
// when it cannot be run.
KernelCompiler make_kernel_compiler(const std::string& path = "", std::vector<std::string> flags = {});

// Runs a shell command and returns its standard output (and error, when merged); throws when it
// cannot start.
std::string run_command_output(const std::string& command);

// Quotes a string for the shell.
std::string shell_quote(const std::string& s);

}  // namespace ansor
