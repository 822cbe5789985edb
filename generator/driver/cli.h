// The ansor-gen command line: subcommands over the generator library.
// Exit status: 0 success, 1 bad input (with `file:line:col: error:` messages), 2 misuse.
#pragma once

#include <iosfwd>

namespace ansor {

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace ansor
