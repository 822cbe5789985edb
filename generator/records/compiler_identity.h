// The compiler that built a record, as records name it: the first line of the compiler's
// `--version` (its release line for nvcc) followed by the kernel flags, separated by spaces
// ("Debian clang version 14.0.6 -O3 -march=native ..."). Measurement writes this text into every
// record (measure/compiler.h); the records layer reads it back to decide which records a
// compiler may replay (record_match.h), so the text's form is defined here, once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ansor {

struct CompilerIdentity {
  std::string version_line;        // "Debian clang version 14.0.6"
  std::vector<std::string> flags;  // as given, in order
  // Recognised from the version line; empty when it is not (such a compiler matches only a
  // record of the very same version line).
  std::string family;   // clang, apple-clang, gcc, nvcc
  std::string version;  // "14.0.6"
  int major = -1;

  // The family and version ("clang 14.0.6"), or the version line when either is unknown.
  std::string short_name() const;
};

// The text records store: the version line, then each flag after a space.
std::string compiler_identity_text(const std::string& version_line, const std::vector<std::string>& flags);

// Reads a record's compiler text back. The flags start at the first word that starts with '-':
// no version line of a known compiler has such a word.
CompilerIdentity parse_compiler_identity(std::string_view text);

// The flags as the compiler applies them, in a form that compares equal when the code is the same:
// an option given twice counts once with its last value (-O2 -O3 is -O3; -fno-math-errno
// -fmath-errno is -fmath-errno; -DN=1 -DN=2 is -DN=2), and the order among different options is
// not kept. A flag's separate argument (-Xclang -foo, -arch sm_90) stays with it; include and
// library paths keep their order (it decides the search), and the umbrella math flags
// (-ffast-math, -funsafe-math-optimizations, -Ofast and their negations) keep their place
// relative to the options around them, since they set many of those.
std::vector<std::string> normalized_flags(const std::vector<std::string>& flags);

}  // namespace ansor
