// Emitting a kernel library: the header with every kernel's prototype, one C++ source per
// kernel, and a registry source that lists the kernels for generic callers.
//
// The CMake integration writes the header, the registry and per-kernel fragments of
// kernels.def at configure time (`ansor-gen configure`), and each kernel's source in a build
// step of its own (`ansor-gen emit FRAGMENT --kernel K`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "codegen/code_generator.h"
#include "driver/tuning_session.h"
#include "lang/program.h"

namespace ansor {

enum class ScheduleKind { Best, Default, Naive, Random, Sampled };

struct EmitOptions {
  std::string lib_name;
  std::string out_dir;
  std::vector<std::string> kernels;  // empty: all
  ScheduleKind schedule = ScheduleKind::Best;
  uint64_t seed = 0;
  SessionOptions session;    // cache, target, compiler: where `best` looks for records
  int trials = 0;            // with `best`: tune this many trials for a kernel without a record
  bool header_only = false;  // the header and the registry, no kernel sources
  // Only DIR/stamps/LIB_K.stamp per kernel: the schedules of the records `best` would try, rewritten
  // only when they change, so that a build re-emits exactly the kernels whose records changed.
  bool stamps_only = false;
  // With stamps_only and trials 0: the command that tunes the kernels, for the line naming the
  // kernels without a record (default: an `ansor-gen tune` command line).
  std::string tune_hint;
};

// What emit_library did, for the CLI to report.
struct EmitReport {
  std::vector<std::string> written;    // files whose content changed
  std::vector<std::string> unchanged;  // files already up to date
  std::vector<std::string> notes;      // per kernel: where its schedule came from
};

// The backend of a target named as the CLI and CMake name it ("host", "cuda" or a target
// string). Throws std::invalid_argument for a malformed string.
const Backend& emit_backend(const std::string& target);

// The seed of a kernel's `--schedule random`: the run's seed mixed with a stable hash of the
// kernel's name, so that each kernel draws its own schedule and every build the same one.
uint64_t random_schedule_seed(uint64_t seed, const std::string& kernel_name);

// Each kernel is emitted for its own target (its `target` attribute), else the options' target.
// Throws CompileError for unknown kernels and emit_backend's error; writes nothing unless
// every kernel emits. Tuning progress (with `trials`) goes to `progress`.
EmitReport emit_library(const Program& program, const EmitOptions& options, std::ostream& progress);

// The header of the library (every kernel of the program); for a CUDA target it declares the
// functions over device pointers and their variants taking a cudaStream_t.
std::string library_header(const Program& program, const std::string& lib_name, const std::string& target = "host");
// The registry source: `LIB_kernels()` over every kernel of the program, and `LIB_target()`.
std::string library_registry(const Program& program, const std::string& lib_name, const std::string& target);

// Writes the header, the registry, one fragment per kernel (`DIR/defs/K.def`) and
// `DIR/LIB_kernels.cmake` listing the kernels: what a build needs at configure time.
// Checks the targets and the kernels' own targets as emit_library would, so that a build fails
// at configure time, and records what the build needs of the target's backend: the backend
// (ANSOR_KERNEL_BACKEND, whose CMake functions build the library), the source extension, and
// per variant the target its build steps name, the flags that key its records and the command
// that compiles its sources with `compiler` and `flags` (empty: the backend's defaults) against
// the runtime headers of `runtime_include` (empty: measurement's). With several (CPU) targets,
// writes instead of the registry a header and registry per variant and the dispatcher
// (driver/library_dispatch.h), the features of each variant asked of `compiler` for its CPU,
// and lists the variants' library names (ANSOR_KERNEL_VARIANT_LIBS; the library itself for one
// target).
EmitReport configure_library(const Program& program, const std::string& lib_name, const std::string& out_dir,
                             const std::vector<std::string>& targets = {"host"}, const std::string& compiler = "",
                             const std::vector<std::string>& flags = {}, const std::string& runtime_include = "");

// `LIB_K.cpp` (the generator's extension), the source of one kernel.
std::string kernel_source_name(const std::string& lib_name, const std::string& kernel, const CodeGenerator& generator);

}  // namespace ansor
