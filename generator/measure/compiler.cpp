// Kernel compiler discovery and identity.
#include "measure/compiler.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "records/compiler_identity.h"

namespace ansor {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string run_command_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  return out;
}

std::vector<std::string> default_kernel_flags() { return {"-O3", "-march=native", "-fno-math-errno", "-ffp-contract=fast"}; }

// The version, not the path: clang++ and /usr/bin/clang++-14 are the same compiler.
std::string KernelCompiler::identity() const { return compiler_identity_text(version, flags); }

bool KernelCompiler::is_clang() const { return version.find("clang version") != std::string::npos; }

KernelCompiler make_kernel_compiler(const std::string& path, std::vector<std::string> flags) {
  KernelCompiler c;
  if (!path.empty()) {
    c.path = path;
  } else {
    for (const char* candidate : {"clang++", "clang++-14", "clang++-15", "clang++-16", "clang++-17", "clang++-18", "c++"}) {
      if (!run_command_output(fmt::format("command -v {} 2>/dev/null", candidate)).empty()) {
        c.path = candidate;
        break;
      }
    }
    if (c.path.empty()) throw std::runtime_error("no C++ compiler found for kernels (install clang++)");
  }
  c.flags = flags.empty() ? default_kernel_flags() : std::move(flags);
  std::string version = run_command_output(shell_quote(c.path) + " --version 2>/dev/null");
  if (version.empty()) throw std::runtime_error("cannot run the kernel compiler '" + c.path + "'");
  c.version = version.substr(0, version.find('\n'));
  // nvcc's first line names no version: its release line does.
  if (size_t release = version.find("Cuda compilation tools"); release != std::string::npos)
    c.version = "nvcc " + version.substr(release, version.find('\n', release) - release);
  return c;
}

}  // namespace ansor
