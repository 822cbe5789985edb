// Targets: the machine kernels are tuned for, as a stable readable string, and when records
// tuned for one target may be used for another. Detecting the host needs the kernel compiler:
// that is measure/host_target.h.
//
// CPU targets are named by what `-march=native` means to the kernel compiler (the CPU model and
// its widest vector ISA) and by the thread count, e.g. `cpu:x86_64:rocketlake:avx512:t2`. Cache
// sizes are reported but not part of the name: they change timings, not correctness.
// CUDA targets are `cuda:sm_80`.
#pragma once

#include <cstdint>
#include <string>

namespace ansor {

struct Target {
  enum class Kind : uint8_t { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  std::string arch;  // x86_64, aarch64
  std::string cpu;   // the compiler's name for the CPU model (CUDA: sm_XX)
  std::string isa;   // widest vector extension: avx512, avx2, sse4, neon, generic
  int threads = 1;
  // Reported, not part of the name.
  int cores = 1;
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;

  int vector_bits() const;  // of isa
  std::string to_string() const;
  // The name as a file name stem (file_name_stem of to_string(): what a cache file is called).
  std::string file_stem() const;
  // Records tuned for `other` replay and perform as tuned here.
  bool compatible_with(const Target& other) const { return to_string() == other.to_string(); }
  // Another CPU model or thread count with the same vector ISA: its records replay here and are
  // a good guess until this target has records of its own.
  bool same_isa(const Target& other) const { return kind == other.kind && arch == other.arch && isa == other.isa; }
};

// Parses a target string; throws std::invalid_argument naming what is wrong.
Target parse_target(const std::string& text);

}  // namespace ansor
