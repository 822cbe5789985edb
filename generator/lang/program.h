// A parsed and checked kernels.def: its kernels, each with its attributes and ComputeDAG.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "support/diagnostics.h"

namespace ansor {

struct KernelAttrs {
  double weight = 1.0;            // how often the kernel runs per inference (task scheduler)
  std::optional<int64_t> trials;  // tuning budget; unset: the build's default
  std::optional<std::string> target;  // host | cuda | a target string; unset: the build's default
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  KernelAttrs attrs;
  ComputeDAG dag;
  // A kernels.def holding just this kernel and the `let` constants before it, so that a build
  // step can depend on one kernel's text rather than the whole file.
  std::string fragment;
};

// A named group of kernels that run together (a model's layers), for the task scheduler's
// objectives: each kernel with how often it runs per inference, and the network's latency
// requirement (objective f2) and reference latency (f3) when given.
struct NetworkMember {
  std::string kernel;
  double count = 1;
};

struct Network {
  std::string name;
  SourceLoc loc;
  std::vector<NetworkMember> members;
  std::optional<double> latency_ms;
  std::optional<double> reference_ms;
};

struct Program {
  std::shared_ptr<const SourceFile> source;
  std::vector<Kernel> kernels;
  std::vector<Network> networks;

  const Kernel* find(const std::string& name) const;
};

// Parses and checks kernels.def text. Throws CompileError.
Program load_program(const std::shared_ptr<const SourceFile>& file);
// Reads the file first; a file that cannot be read is a CompileError without position.
Program load_program_file(const std::string& path);

}  // namespace ansor
