// The builder: lowers candidate schedules (unless the search did), checks them against the
// target's limits (a GPU's threads and shared memory per block), prints them with the target's
// code generator and compiles them into shared libraries with the compiler and flags
// that build the final library, several candidates per translation unit (paying the compiler's
// start-up once; how many from measured compile times) and several compilers at a time, each
// under a time limit. With clang, the
// runtime headers every unit includes are parsed once, into a precompiled header. Candidates
// whose program was compiled before (the caller says which) are printed but not compiled again.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "codegen/code_generator.h"
#include "lower/lowered_kernel.h"
#include "measure/compiler.h"
#include "measure/unit_planner.h"
#include "records/record.h"
#include "schedule/state.h"

namespace ansor {

// Faults planted in candidates by tests (directly, or through a decorator of the measurer), to
// check that measurement and tuning survive them.
enum class PlantedFault : uint8_t { None, CompileError, Crash, Hang, WrongResult };

struct Candidate {
  std::string kernel_name;
  State state;
  PlantedFault fault = PlantedFault::None;
  // The state's loop program when the search already lowered it (for its features): built as
  // it is, not lowered a second time.
  std::shared_ptr<const LoweredKernel> lowered = nullptr;
  // Measured again even where its program was measured before (the tuner's confirmation of
  // its fastest schedules): built and run, never answered from an earlier record.
  bool remeasure = false;
};

struct BuildOptions {
  int parallel = 2;              // compilers at a time
  int per_unit = 0;              // candidates per translation unit; 0: planned from compile times (unit_planner.h)
  double timeout_seconds = 30;   // per compiler run, at most
  // Once compile times are known, a run also stops at this many times what its unit is
  // expected to take, but not below min_timeout_seconds: a program that compiles far slower
  // than the others is an over-unrolled one, which rarely runs fastest, and waiting the whole
  // limit for it (then again, alone) took a third of some kernels' tuning time.
  double slow_compile_factor = 6;
  double min_timeout_seconds = 5;
  bool precompile_prelude = true;  // when the compiler is clang
  std::string work_dir;          // where sources and libraries go
  std::string runtime_include;   // the directory holding ansor/kernel_support.h
};

struct BuildResult {
  MeasureError error = MeasureError::None;
  std::string message;
  std::string library;  // the shared library holding `symbol`_info
  std::string symbol;
  // The printed program's identity: a hash of its source with the symbol left out, the same for
  // candidates (different schedules, or a schedule measured again) that compile to the same
  // code. Empty when the candidate was not printed (an invalid schedule).
  std::string program;
};

// Says whether a printed program is already known to the caller, so that the builder does not
// compile it (again); called once per printed candidate, in order.
using KnownProgram = std::function<bool(const std::string& program)>;

class Builder {
 public:
  // Builds for `target` with the code generator of its kind (its backend's).
  Builder(KernelCompiler compiler, Target target, const CodeGenerator& generator, BuildOptions options);

  // Candidates for which `known` (when set) answers true get a result with their program and
  // symbol but no library.
  std::vector<BuildResult> build(const std::vector<Candidate>& candidates, const KnownProgram& known = {});
  // The identity (BuildResult::program) of the program the candidate prints to, without
  // compiling it; empty when it does not lower or print. Its time is the caller's (not in
  // codegen_seconds()).
  std::string program_of(const Candidate& candidate) const;

  const KernelCompiler& compiler() const { return compiler_; }
  // Totals since construction: candidates built, compiler wall time and CPU time (what
  // compiling costs whatever else runs on the machine), and the time spent lowering and
  // printing candidates.
  int built() const { return built_; }
  double seconds() const { return seconds_; }
  double cpu_seconds() const { return cpu_seconds_; }
  double codegen_seconds() const { return codegen_seconds_; }

 private:
  struct Unit {
    std::vector<size_t> members;
    std::string source, library;
  };
  // The time limit of a compiler run over `members` candidates.
  double compile_limit(size_t members) const;
  // The candidate's source under `symbol`. Throws std::invalid_argument (InvalidState, or a
  // program the generator cannot print).
  std::string print(const Candidate& c, const std::string& symbol) const;
  void compile(std::vector<Unit>& units, std::vector<BuildResult>& results, bool retry_alone, const std::vector<std::string>& sources);
  // The generator's prelude precompiled once, when the compiler is clang: every unit includes
  // the same runtime headers. Precompiled again when a runtime header changed since (clang
  // refuses a precompiled header older than its inputs, which failed every later candidate).
  // Empty when there is none (another compiler, or it failed).
  const std::string& precompiled_prelude();

  KernelCompiler compiler_;
  const Target target_;
  const CodeGenerator& generator_;
  BuildOptions options_;
  int built_ = 0;
  double seconds_ = 0;
  double cpu_seconds_ = 0;
  double codegen_seconds_ = 0;
  UnitPlanner planner_;
  bool prelude_tried_ = false;
  std::filesystem::file_time_type prelude_headers_time_;  // the newest runtime header's, when precompiled
  std::string prelude_pch_;
};

}  // namespace ansor
