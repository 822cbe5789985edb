// Targets: the machine kernels are tuned for, as a stable readable string, and when records
// tuned for one target may be used for another. Detecting the host needs the kernel compiler:
// that is measure/host_target.h.
//
// CPU targets are named by what `-march=native` means to the kernel compiler (the CPU model, its
// widest vector ISA and the tensor-instruction features it offers) and by the thread count, e.g.
// `cpu:x86_64:rocketlake:avx512:t2`, or `cpu:x86_64:znver4:avx512+avx512bf16+avx512vnni:t2` where
// the CPU has instructions that tensor intrinsics (lower/tensor_intrinsic.h) rely on. Cache sizes
// are reported but not part of the name: they change timings, not correctness.
// CUDA targets are `cuda:sm_80`: the compute capability names the target, and the limits of a
// thread block come from a table of the architectures (docs/cuda.md), overridden by what the
// device reports where one is present (measure/host_target.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ansor {

// What a GPU lets one kernel launch use. A schedule that exceeds a limit cannot launch (threads,
// shared memory, grid) or spills (registers): lowered GPU programs are checked against them
// before they are emitted or measured.
struct GpuLimits {
  int max_threads_per_block = 1024;
  int64_t max_shared_bytes_per_block = 48 * 1024;  // with the opt-in for dynamic shared memory
  int max_registers_per_thread = 255;
  int registers_per_block = 64 * 1024;  // 32-bit registers of one block together
  int warp_size = 32;
  int sm_count = 1;                     // streaming multiprocessors: the parallelism to fill
  int max_threads_per_sm = 2048;
  int64_t max_grid_x = (int64_t{1} << 31) - 1;
  int64_t max_grid_yz = 65535;
  int64_t l2_bytes = 0;

  // Whether `threads` threads along threadIdx.x can combine values (a reduction across threads):
  // a power of two up to a warp, whose lanes exchange values, or whole warps, combined through
  // shared memory; at most a block.
  bool reduces_across(int64_t threads) const;
};

// The limits of a CUDA architecture ("sm_80") from the table of the ones ansor knows, with the
// SM count and L2 size of its largest data-centre part; nothing for another architecture.
std::optional<GpuLimits> gpu_limits_of_arch(const std::string& sm);
// The architectures of that table, oldest first ("sm_75", ...).
std::vector<std::string> known_gpu_archs();

// The CPU features that tensor intrinsics rely on, as compilers name them (-mavx512bf16 defines
// __AVX512BF16__): a target names those it has, so that records using them replay only where
// they run. AVX-VNNI (`avxvnni`, VPDPBUSD on ymm registers) is named by AVX2 targets alone:
// where AVX-512 is, its zmm form (avx512vnni) serves instead (measure/host_target.cpp).
const std::vector<std::string>& tensor_feature_names();

struct Target {
  enum class Kind : uint8_t { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  std::string arch;  // x86_64, aarch64
  std::string cpu;   // the compiler's name for the CPU model (CUDA: sm_XX)
  std::string isa;   // widest vector extension: avx512, avx2, sse4, neon, generic
  std::vector<std::string> tensor_features;  // of tensor_feature_names(), in that order
  int threads = 1;
  // Reported, not part of the name.
  int cores = 1;
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  // The line of the data caches, which prefetches step by: 64 bytes, the line of x86-64 and of
  // the Arm cores ansor targets. Not detected: it changes the emitted code, which must be the
  // same for a target however it was named (parsed or detected).
  int cache_line_bytes = 64;
  GpuLimits gpu;  // CUDA targets only

  int vector_bits() const;  // of isa
  bool has_tensor_feature(const std::string& name) const;
  // The ISA field of the name: the vector ISA, then the tensor features ("avx512+avx512vnni").
  std::string isa_and_features() const;
  std::string to_string() const;
  // The name as a file name stem (file_name_stem of to_string(): what a cache file is called).
  std::string file_stem() const;
  // Records tuned for `other` replay and perform as tuned here.
  bool compatible_with(const Target& other) const { return to_string() == other.to_string(); }
  // Records tuned here replay on `other` and are a good guess there until it has records of its
  // own: another CPU model or thread count with the same vector ISA and at least this target's
  // tensor features (records tuned without them replay on a CPU that has them, not the reverse).
  bool same_isa(const Target& other) const;
};

// Parses a target string; throws std::invalid_argument naming what is wrong.
Target parse_target(const std::string& text);

}  // namespace ansor
