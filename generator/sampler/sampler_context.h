// What the program sampler knows about the target: CPU or GPU, how much parallelism, vector
// width and the limits tile sizes must respect.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "target/target.h"

namespace ansor {

class State;

// A tensor intrinsic of the target as the sketch rules see it (the backend fills them in from
// its table, lower/tensor_intrinsic.h): it sums products of `lhs` and `rhs` elements converted
// to `out`, `lanes` outputs consecutive along the innermost output axis at once, each over
// `depth` consecutive elements of a reduction axis along which `lhs` is contiguous and which
// it shares for all lanes.
struct TensorizeOption {
  DType lhs = DType::BF16, rhs = DType::BF16, out = DType::F32;
  int64_t lanes = 16, depth = 2;
  // A tile row (AMX): the rows of lhs one call takes, and k is taken in steps of 16 × depth (a
  // tile row of 64 bytes), any number of them per call. 0: a dot-product row (one lhs row).
  int64_t rows = 0;
  int64_t tile_rows = 0;  // of each lhs tile (rows is a whole number of tiles of them)
  // A warp row (a GPU's tensor cores): a warp's call computes warp_m_tiles × warp_n_tiles tiles
  // of 16 rows and 8 columns over `depth` steps of k; each lane its 2 rows and 2 columns of each.
  // 0: not a warp row. `tf32`: its operands are f32 loads rounded by tf32() in the kernel.
  int64_t warp_m_tiles = 0, warp_n_tiles = 0;
  bool tf32 = false;
};

struct SamplerContext {
  bool gpu = false;
  int parallelism = 2;                  // CPU threads, or GPU streaming multiprocessors
  int vector_lanes = 16;                // f32 lanes of the widest vector (CPU)
  int max_innermost_factor = 64;        // innermost tile sizes at most this
  std::vector<int> unroll_steps = {0, 16, 64, 512};  // auto_unroll_max_step choices
  // prefetch_bytes choices: a few lines to a few pages ahead of the loads (CPU)
  std::vector<int> prefetch_distances = {512, 1024, 2048, 4096};
  // Inputs and outputs smaller than this stay in the caches, where memory pragmas have nothing
  // to do.
  int64_t min_streamed_bytes = int64_t{256} << 10;
  // GPU: the limits of a block, and how many virtual threads a tile may have
  GpuLimits gpu_limits;
  int max_vthreads = 8;
  // GPU: why a program could not be launched once lowered (threads, shared memory after
  // padding, registers of local buffers, barriers only some threads reach), or empty when it
  // can: the backend's check of the lowered program, which the sampler cannot lower itself.
  // within_gpu_limits asks it after its own estimate, so no candidate it refuses is proposed.
  std::function<std::string(const State&)> launch_problem;
  // The tensor intrinsics that tiles of matching reductions are computed by.
  std::vector<TensorizeOption> tensor_intrinsics;

  // A CPU's: its threads and vector width.
  static SamplerContext for_cpu(const Target& target);
  // A GPU's: its multiprocessors and the limits of a block.
  static SamplerContext for_gpu(const Target& target);
};

// The thread counts worth trying for a reduction of `extent` elements across the threads of a
// block: powers of two from a warp up to the block's limit and the extent (for an extent under
// a warp, the largest power of two in it).
std::vector<int64_t> reduction_thread_counts(int64_t extent, const SamplerContext& ctx);

}  // namespace ansor
