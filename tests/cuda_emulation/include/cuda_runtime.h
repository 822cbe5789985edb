// A CPU emulation of the CUDA runtime and device code, as much as ansor's emitted kernels use,
// for tests on machines without a GPU: the emitted .cu sources, compiled as C++ against this
// header instead of the toolkit's, run every block of a launch in turn with one thread per CUDA
// thread. __syncthreads() is a barrier of the block's threads, warp shuffles exchange values
// through a barrier of the warp's threads, tensor-core products (mma.sync) and matrix loads
// (ldmatrix) gather the warp's fragments and addresses the same way, shared memory is one buffer that each block has while it runs, and
// device memory is host memory. Nothing here checks for races (the lowered program's
// interpreter does); what it checks is that the printed CUDA computes what lowering decided.
#ifndef ANSOR_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
#define ANSOR_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H

#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <ansor/scalar_support.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __restrict__ __restrict
#define __align__(bytes) alignas(bytes)
// A function's shared array is one for the process: blocks run one at a time.
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct int2 {
  int x, y;
};
struct int4 {
  int x, y, z, w;
};

inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
};
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
using cudaStream_t = struct CUstream_st*;

namespace ansor_cuda_emulation {

// The most dynamic shared memory a block may have, as on an H100.
inline constexpr size_t kMaxSharedBytes = 227 * 1024;

// A lane's input registers of an mma.sync, which the whole warp reads.
struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
};

struct Block {
  std::barrier<> threads;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<uint64_t> lanes;  // one value per thread, for shuffles
  std::vector<MmaOperands> mma_operands;  // one per thread
  explicit Block(unsigned count) : threads(count), lanes(count), mma_operands(count) {
    for (unsigned first = 0; first < count; first += 32) warps.push_back(std::make_unique<std::barrier<>>(std::min(32u, count - first)));
  }
};

inline thread_local Block* current_block = nullptr;
inline cudaError_t last_error = cudaSuccess;

inline unsigned char* dynamic_shared_memory() {
  alignas(16) static unsigned char memory[kMaxSharedBytes];
  return memory;
}

inline unsigned linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// Runs `kernel` over the grid: each block with one std::thread per CUDA thread, the blocks one
// after another, and one launch at a time (the shared memory is the process's).
template <class... Params, class... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t, Args... args) {
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  const unsigned threads = block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || shared_bytes > kMaxSharedBytes) return last_error = cudaErrorInvalidConfiguration;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        Block state(threads);
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < threads; ++t) {
          workers.emplace_back([&, t] {
            threadIdx = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
            blockIdx = dim3(bx, by, bz);
            blockDim = block;
            gridDim = grid;
            current_block = &state;
            kernel(args...);
            // Barriers after this thread's end do not wait for it (as on a GPU).
            state.threads.arrive_and_drop();
            state.warps[t / 32]->arrive_and_drop();
          });
        }
        for (std::thread& w : workers) w.join();
      }
  return cudaSuccess;
}

// The calling lane's part of an mma.sync with f32 accumulators (c += a * b; the fragment layouts
// are ansor_rt::mma_sync's): the warp's lanes deposit their registers, each rebuilds A (16 x
// depth) and B (depth x 8) from all of them by `place` and computes its own four sums in f32, k
// ascending. Every lane of a whole warp calls it together. `place(lane, a, b, A, B)` puts one
// lane's registers into the matrices.
template <int Depth, class Place>
void mma_exchange(const uint32_t* a, const uint32_t* b, float* c, Place place) {
  const unsigned thread = linear_thread(), lane = thread % 32, warp = thread / 32;
  // The instruction needs all 32 lanes; a block's partial last warp has no others to read.
  if (blockDim.x * blockDim.y * blockDim.z - warp * 32 < 32) std::abort();
  std::barrier<>& lanes = *current_block->warps[warp];
  MmaOperands& own = current_block->mma_operands[thread];
  std::memcpy(own.a, a, sizeof own.a);
  std::memcpy(own.b, b, sizeof own.b);
  lanes.arrive_and_wait();
  float matrix_a[16][Depth], matrix_b[Depth][8];
  for (unsigned source = 0; source < 32; ++source) {
    const MmaOperands& operands = current_block->mma_operands[warp * 32 + source];
    place(source, operands, matrix_a, matrix_b);
  }
  // Products of 16-bit floats and of TF32 values are exact in f32, so contracting them into
  // FMAs changes nothing.
  const unsigned g = lane / 4, t = lane % 4;
  float d[4];
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned row = g + 8 * (i / 2), column = 2 * t + i % 2;
    d[i] = c[i];
    for (unsigned k = 0; k < Depth; ++k) d[i] += matrix_a[row][k] * matrix_b[k][column];
  }
  // No lane deposits its next operands while another still reads these.
  lanes.arrive_and_wait();
  std::memcpy(c, d, sizeof d);
}

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32.
inline void mma_m16n8k16(bool bf16, const uint32_t* a, const uint32_t* b, float* c) {
  const auto low = [bf16](uint32_t pair) {
    const auto bits = static_cast<uint16_t>(pair);
    return bf16 ? ansor_rt::bf16_to_f32(bits) : ansor_rt::f16_to_f32(bits);
  };
  const auto high = [&low](uint32_t pair) { return low(pair >> 16); };
  mma_exchange<16>(a, b, c, [&](unsigned source, const MmaOperands& operands, float (&matrix_a)[16][16], float (&matrix_b)[16][8]) {
    const unsigned g = source / 4, t = source % 4;
    for (unsigned r = 0; r < 4; ++r) {
      const unsigned row = g + 8 * (r % 2), k = 2 * t + 8 * (r / 2);
      matrix_a[row][k] = low(operands.a[r]);
      matrix_a[row][k + 1] = high(operands.a[r]);
    }
    for (unsigned r = 0; r < 2; ++r) {
      const unsigned k = 2 * t + 8 * r;
      matrix_b[k][g] = low(operands.b[r]);
      matrix_b[k + 1][g] = high(operands.b[r]);
    }
  });
}

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: each register one TF32 value's f32 bits.
inline void mma_m16n8k8_tf32(const uint32_t* a, const uint32_t* b, float* c) {
  const auto value = [](uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
  };
  mma_exchange<8>(a, b, c, [&](unsigned source, const MmaOperands& operands, float (&matrix_a)[16][8], float (&matrix_b)[8][8]) {
    const unsigned g = source / 4, t = source % 4;
    for (unsigned r = 0; r < 4; ++r) matrix_a[g + 8 * (r % 2)][t + 4 * (r / 2)] = value(operands.a[r]);
    for (unsigned r = 0; r < 2; ++r) matrix_b[t + 4 * r][g] = value(operands.b[r]);
  });
}

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (ansor_rt::load_matrices): the warp's lanes deposit
// their row addresses, and each reads its two elements of every matrix from the row that lane
// 8 i + lane / 4 addressed. Every lane of a whole warp calls it together.
inline void ldmatrix_x4(const uint16_t* row, uint32_t (&r)[4]) {
  const unsigned thread = linear_thread(), lane = thread % 32, warp = thread / 32;
  if (blockDim.x * blockDim.y * blockDim.z - warp * 32 < 32) std::abort();
  // The instruction's rows are 16 bytes, aligned, in shared memory.
  const unsigned char* shared = dynamic_shared_memory();
  const auto* bytes = reinterpret_cast<const unsigned char*>(row);
  if (reinterpret_cast<uintptr_t>(row) % 16 != 0 || bytes < shared || bytes + 16 > shared + kMaxSharedBytes) std::abort();
  std::barrier<>& lanes = *current_block->warps[warp];
  current_block->lanes[thread] = reinterpret_cast<uintptr_t>(row);
  lanes.arrive_and_wait();
  for (unsigned i = 0; i < 4; ++i) {
    const auto* source = reinterpret_cast<const uint16_t*>(current_block->lanes[warp * 32 + 8 * i + lane / 4]);
    r[i] = static_cast<uint32_t>(source[2 * (lane % 4)]) | static_cast<uint32_t>(source[2 * (lane % 4) + 1]) << 16;
  }
  lanes.arrive_and_wait();
}

// The value that lane source(lane) of this warp gave: every lane deposits its own, the warp
// meets, each lane reads the one it wants, and the warp meets again before any deposits its
// next (warp shuffles).
template <class T, class Source>
T exchange_in_warp(T value, Source source) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>, "shuffles of up to 8 bytes");
  const unsigned thread = linear_thread(), lane = thread % 32, warp = thread / 32;
  std::barrier<>& lanes = *current_block->warps[warp];
  std::memcpy(&current_block->lanes[thread], &value, sizeof(T));
  lanes.arrive_and_wait();
  T result;
  std::memcpy(&result, &current_block->lanes[warp * 32 + source(lane)], sizeof(T));
  lanes.arrive_and_wait();
  return result;
}

}  // namespace ansor_cuda_emulation

inline void __syncthreads() { ansor_cuda_emulation::current_block->threads.arrive_and_wait(); }

// The value of lane (this lane ^ lane_mask) of this warp, within segments of `width` lanes.
template <class T>
T __shfl_xor_sync(unsigned, T value, int lane_mask, int width = 32) {
  return ansor_cuda_emulation::exchange_in_warp(value, [&](unsigned lane) {
    const unsigned source = lane ^ static_cast<unsigned>(lane_mask), segment = static_cast<unsigned>(width);
    return source / segment == lane / segment ? source : lane;
  });
}

// The value of lane `source` of this warp (of its segment of `width` lanes).
template <class T>
T __shfl_sync(unsigned, T value, int source, int width = 32) {
  return ansor_cuda_emulation::exchange_in_warp(value, [&](unsigned lane) {
    const unsigned segment = static_cast<unsigned>(width);
    return lane / segment * segment + static_cast<unsigned>(source) % segment;
  });
}

inline float __int_as_float(int bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline double __longlong_as_double(long long bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// ---- Host functions: device memory is host memory, streams run at once -----------------------

inline const char* cudaGetErrorString(cudaError_t error) { return error == cudaSuccess ? "no error" : "emulated CUDA error"; }
inline cudaError_t cudaGetLastError() {
  cudaError_t error = ansor_cuda_emulation::last_error;
  ansor_cuda_emulation::last_error = cudaSuccess;
  return error;
}
inline cudaError_t cudaMalloc(void** block, size_t bytes) {
  *block = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *block ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaMallocAsync(void** block, size_t bytes, cudaStream_t) { return cudaMalloc(block, bytes); }
inline cudaError_t cudaFree(void* block) {
  std::free(block);
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* block, cudaStream_t) { return cudaFree(block); }
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(to, from, bytes, kind);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int value) {
  return static_cast<size_t>(value) <= ansor_cuda_emulation::kMaxSharedBytes ? cudaSuccess : cudaErrorInvalidValue;
}

#endif  // ANSOR_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
