// Code generators: one per kind of target (its backend's, backend/), each printing lowered kernels as the sources of that
// target's language and saying how they are compiled. The builder (measurement), the library
// emitter and the CMake integration ask a generator for file names and commands; none of them
// assumes a language.
#pragma once

#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "lower/lowered_kernel.h"
#include "target/target.h"
#include "schedule/state.h"

namespace ansor {

// What a compiled source is for.
enum class CompileOutput : uint8_t {
  SharedLibrary,       // a candidate that the measurement worker loads
  Object,              // a kernel of a static library
  PrecompiledPrelude,  // source_prelude() precompiled (clang's -include-pch) for SharedLibrary
};

class CodeGenerator {
 public:
  virtual ~CodeGenerator() = default;

  // The extension of its source files, with the dot (".cpp").
  virtual std::string source_extension() const = 0;
  // What every source file starts with (includes).
  virtual std::string source_prelude() const = 0;
  // The definitions of one kernel: its C functions `symbol`, `symbol_packed`, `symbol_pack_W`,
  // ... and the descriptor `const ansor_kernel_info symbol_info`. `origin` says where the
  // schedule came from (stored in the descriptor). Several kernels may share one source file.
  // Throws std::invalid_argument for a program this generator cannot print.
  virtual std::string kernel_definitions(const LoweredKernel& kernel, const ComputeDAG& dag, const std::string& kernel_name,
                                         const std::string& symbol, const std::string& origin) const = 0;
  // Flags its sources need whatever the user's flags are (language standard, position
  // independence).
  virtual std::vector<std::string> language_flags() const = 0;
  // Throws InvalidState when the kernel exceeds what the target allows (a GPU's threads or shared
  // memory per block): every program is checked before it is emitted or measured.
  virtual void check(const LoweredKernel& kernel, const Target& target) const;
  // The command that compiles `source` into `output` with the user's compiler and flags; a
  // SharedLibrary uses `precompiled_prelude` (made by a PrecompiledPrelude command with the same
  // compiler and flags) unless it is empty. Only clang reads precompiled preludes.
  virtual std::vector<std::string> compile_command(const std::string& compiler, const std::vector<std::string>& flags,
                                                   const std::string& runtime_include, const std::string& source,
                                                   const std::string& output, CompileOutput kind,
                                                   const std::string& precompiled_prelude = "") const = 0;
};

// Comment lines ("//   ...") listing the steps of a schedule, for the head of a source file.
std::string steps_comment(const State& state);

}  // namespace ansor
