// Support code for the CUDA kernels that ansor-gen emits (`.cu` sources compiled by nvcc): the
// scalar helpers of scalar_support.h (device functions there too), min/max and special float
// values on the device, vector copies, the reduction of values across the threads of a block,
// tensor-core products of a warp, launches and the dynamic shared memory, and the host side's
// workspace and error handling.
//
// Header-only; it needs the CUDA runtime (cuda_runtime.h, libcudart) and nothing else of the
// toolkit. Compiled inside users' builds with their warning flags.
#ifndef ANSOR_CUDA_SUPPORT_H
#define ANSOR_CUDA_SUPPORT_H

#include <cuda_runtime.h>

#include "runtime.h"
#include "scalar_support.h"

namespace ansor_rt {

// ---- Device scalars ---------------------------------------------------------------------------

// min and max with std::min's and std::max's results (the first argument on ties and NaNs).
template <class T>
__device__ __forceinline__ T min_of(T a, T b) {
  return b < a ? b : a;
}

template <class T>
__device__ __forceinline__ T max_of(T a, T b) {
  return a < b ? b : a;
}

template <class T>
__device__ __forceinline__ T quiet_nan();
template <>
__device__ __forceinline__ float quiet_nan<float>() {
  return __int_as_float(0x7fc00000);
}
template <>
__device__ __forceinline__ double quiet_nan<double>() {
  return __longlong_as_double(0x7ff8000000000000LL);
}

template <class T>
__device__ __forceinline__ T infinity();
template <>
__device__ __forceinline__ float infinity<float>() {
  return __int_as_float(0x7f800000);
}
template <>
__device__ __forceinline__ double infinity<double>() {
  return __longlong_as_double(0x7ff0000000000000LL);
}

// ---- Vector copies ----------------------------------------------------------------------------

// The type of one access of N elements of T: 4, 8 or 16 bytes.
template <int N, class T, int Bytes = N * static_cast<int>(sizeof(T))>
using VectorOf = typename std::conditional<Bytes == 16, int4, typename std::conditional<Bytes == 8, int2, int>::type>::type;

// Copies N (2 to 8) consecutive 2- or 4-byte elements, 4, 8 or 16 bytes: as one vector when both
// addresses are aligned to it (Aligned), else element by element.
template <int N, bool Aligned, class T>
__device__ __forceinline__ void copy_vector(T* to, const T* from) {
  constexpr int bytes = N * static_cast<int>(sizeof(T));
  static_assert(N >= 2 && (bytes == 4 || bytes == 8 || bytes == 16), "vectors of 4, 8 or 16 bytes");
  using Vector = VectorOf<N, T>;
  if constexpr (Aligned) {
    *reinterpret_cast<Vector*>(to) = *reinterpret_cast<const Vector*>(from);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) to[i] = from[i];
  }
}

// The same copy where `copies` holds, else N zeros stored (a block's shared copy past its
// tensor's edge, which a tile then sums as nothing); `from` is not read then.
template <int N, bool Aligned, class T>
__device__ __forceinline__ void copy_vector_or_zero(T* to, const T* from, bool copies) {
  if (copies) {
    copy_vector<N, Aligned>(to, from);
    return;
  }
  if constexpr (Aligned) {
    *reinterpret_cast<VectorOf<N, T>*>(to) = VectorOf<N, T>{};
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) to[i] = T{};
  }
}

// Whether every pointer is aligned to a vector of four 4-byte elements (16 bytes).
template <class... T>
inline bool aligned_to_vectors(const T*... pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers) % 16 == 0) && ...);
}

// ---- Reductions across threads ----------------------------------------------------------------

enum class Reduction { Sum, Prod, Min, Max };

// Integers wrap on overflow, as the kernels' integer arithmetic does (scalar_support.h).
template <Reduction R, class T>
__device__ __forceinline__ T combine(T a, T b) {
  constexpr bool wraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  if constexpr (R == Reduction::Sum) {
    if constexpr (wraps) return wrapping_add(a, b);
    return a + b;
  }
  if constexpr (R == Reduction::Prod) {
    if constexpr (wraps) return wrapping_mul(a, b);
    return a * b;
  }
  if constexpr (R == Reduction::Min) return min_of(a, b);
  return max_of(a, b);
}

// The values of the Threads threads along threadIdx.x (blockDim.x == Threads), combined by R;
// every thread gets the result. Threads is a power of two up to a warp, whose lanes exchange
// their values by shuffles, or whole warps, whose results meet in shared memory. Every thread
// of the block calls it together (it may wait at barriers); rows of the block along threadIdx.y
// and .z reduce separately.
template <Reduction R, int Threads, class T>
__device__ __forceinline__ T reduce_across_threads(T value) {
  static_assert(Threads > 0 && (Threads <= 32 ? (Threads & (Threads - 1)) == 0 : Threads % 32 == 0),
                "a power of two up to a warp, or whole warps");
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned block = blockDim.x * blockDim.y * blockDim.z;
  // The lanes of this warp that exist: a block's last warp may be partial.
  const unsigned lanes = block - (linear & ~31u) < 32u ? block - (linear & ~31u) : 32u;
  const unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
  constexpr int kWidth = Threads < 32 ? Threads : 32;
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) value = combine<R>(value, __shfl_xor_sync(mask, value, offset, kWidth));
  if constexpr (Threads > 32) {
    __shared__ T partials[32];
    __syncthreads();  // readers of an earlier call are done
    if ((linear & 31u) == 0) partials[linear / 32] = value;
    __syncthreads();
    const unsigned first = linear / Threads * (Threads / 32);
    value = partials[first];
#pragma unroll
    for (int w = 1; w < Threads / 32; ++w) value = combine<R>(value, partials[first + w]);
  }
  return value;
}

// ---- Tensor-core products -----------------------------------------------------------------------

enum class MmaInput { F16, BF16, TF32 };

// One warp-wide mma.sync with f32 accumulators, d = c + a * b, for the calling lane's fragments
// in the PTX ISA's layout (lane = 4 g + t); c0..c3 = C[g][2t], C[g][2t+1], C[g+8][2t],
// C[g+8][2t+1] of the 16 x 8 tile.
// - F16, BF16: m16n8k16; a0..a3 = A[g][2t, 2t+1], A[g+8][2t, 2t+1], A[g][2t+8, 2t+9],
//   A[g+8][2t+8, 2t+9]; b0, b1 = B[2t, 2t+1][g], B[2t+8, 2t+9][g]; each register's lower 16
//   bits hold the lower k.
// - TF32: m16n8k8 on f32 bits of TF32 values; a0..a3 = A[g][t], A[g+8][t], A[g][t+4],
//   A[g+8][t+4]; b0, b1 = B[t][g], B[t+4][g].
// A template so that only the kernels that call it reach ptxas, which refuses it below sm_80.
template <MmaInput Input>
__device__ __forceinline__ void mma_sync(const uint32_t a[4], const uint32_t b[2], float c[4]) {
#if defined(__CUDACC__)
  if constexpr (Input == MmaInput::F16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Input == MmaInput::BF16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#else
  if constexpr (Input == MmaInput::TF32) {
    ansor_cuda_emulation::mma_m16n8k8_tf32(a, b, c);
  } else {
    ansor_cuda_emulation::mma_m16n8k16(Input == MmaInput::BF16, a, b, c);
  }
#endif
}

// The elements of a shared tile whose rows of Row elements are stored in chunks of Chunk
// elements, row r's chunks rotated by r / RowsPerStep places (the generator's layout against
// bank conflicts for tiles that warps read down their columns): the tile and a logical offset
// into it, with the arithmetic of a pointer on the logical offset and each element read where it
// is stored. Chunks are 16 bytes, so an aligned vector or pair within one stays consecutive.
template <class T, int Row, int Chunk, int RowsPerStep>
struct RotatedRows {
  T* base;
  int offset;

  // Offsets are never negative: unsigned, a power-of-two row, chunk or step is a shift or a mask.
  __device__ __forceinline__ static int stored(int logical) {
    const unsigned at = static_cast<unsigned>(logical), row = at / Row, column = at % Row;
    return static_cast<int>(row * Row + ((column / Chunk + row / RowsPerStep) % (Row / Chunk)) * Chunk + column % Chunk);
  }
  __device__ __forceinline__ RotatedRows operator+(int elements) const { return {base, offset + elements}; }
  __device__ __forceinline__ T& operator[](int i) const { return base[stored(offset + i)]; }
  __device__ __forceinline__ T* address() const { return base + stored(offset); }
};

template <int Row, int Chunk, int RowsPerStep, class T>
__device__ __forceinline__ RotatedRows<T, Row, Chunk, RowsPerStep> rotated_rows(T* base, int offset) {
  return {base, offset};
}

// Where an operand's first element is stored.
template <class T>
__device__ __forceinline__ T* address_of(T* pointer) {
  return pointer;
}
template <class T, int Row, int Chunk, int RowsPerStep>
__device__ __forceinline__ T* address_of(const RotatedRows<T, Row, Chunk, RowsPerStep>& rows) {
  return rows.address();
}

namespace detail {

// Two 16-bit elements `stride` apart as one register, the first in the lower half.
template <class Ref>
__device__ __forceinline__ uint32_t pack_pair(Ref first, int stride) {
  return static_cast<uint32_t>(first[0]) | static_cast<uint32_t>(first[stride]) << 16;
}

// Two consecutive 16-bit elements at a 4-byte aligned address as one register (one load).
__device__ __forceinline__ uint32_t load_word(const uint16_t* first) {
  uint32_t word;
  memcpy(&word, __builtin_assume_aligned(first, 4), sizeof word);
  return word;
}

// One register of a fragment: the element and the next along k (`stride` apart), loaded as one
// word where the call says the pairs are consecutive and aligned.
template <bool Word, class Ref>
__device__ __forceinline__ uint32_t fragment_register(Ref first, int stride) {
  if constexpr (Word) {
    return load_word(address_of(first));
  } else {
    return pack_pair(first, stride);
  }
}

// Four 8 x 8 matrices of 16-bit elements from shared memory, one warp-wide ldmatrix.x4: lane L
// gives the address of row L % 8 of matrix L / 8 (its 8 elements consecutive, 16-byte aligned),
// and receives in r[i] the elements 2 (L % 4) and 2 (L % 4) + 1 of row L / 4 of matrix i, the
// lower in the lower half: for the matrices A's rows g and g + 8 at k 0-7 and 8-15, its a0..a3 of
// an m16n8k16. Every lane of a whole warp calls it together.
__device__ __forceinline__ void load_matrices(const uint16_t* row, uint32_t (&r)[4]) {
#if defined(__CUDACC__)
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
#else
  ansor_cuda_emulation::ldmatrix_x4(row, r);
#endif
}

// The operand that lane `source` of the warp passed (a pointer, or a RotatedRows' logical offset:
// the base is the same on every lane).
template <class T>
__device__ __forceinline__ T* operand_of_lane(T* pointer, int source) {
  return reinterpret_cast<T*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(pointer), source));
}
template <class T, int Row, int Chunk, int RowsPerStep>
__device__ __forceinline__ RotatedRows<T, Row, Chunk, RowsPerStep> operand_of_lane(const RotatedRows<T, Row, Chunk, RowsPerStep>& rows,
                                                                                   int source) {
  return {rows.base, __shfl_sync(0xffffffffu, rows.offset, source)};
}

// An f32 rounded to TF32, as the register an m16n8k8 takes.
__device__ __forceinline__ uint32_t tf32_bits(float x) { return bits_of(tf32(x)); }

// This thread's lane in its warp, and the lane's g = lane / 4 and t = lane % 4.
struct Lane {
  int g, t;
};
__device__ __forceinline__ Lane lane_of_thread() {
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32u;
  return {static_cast<int>(lane / 4), static_cast<int>(lane % 4)};
}

// The MI x NJ products of the lane's fragments into its accumulators (see mma_f16_f32).
template <MmaInput Input, int MI, int NJ>
__device__ __forceinline__ void multiply_tiles(const uint32_t (&a)[MI][4], const uint32_t (&b)[NJ][2], float* c, int c_mi, int c_h, int c_nj,
                                               int c_c) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int nj = 0; nj < NJ; ++nj) {
      float* tile = c + mi * c_mi + nj * c_nj;
      float accumulators[4] = {tile[0], tile[c_c], tile[c_h], tile[c_h + c_c]};
      mma_sync<Input>(a[mi], b[nj], accumulators);
      tile[0] = accumulators[0];
      tile[c_c] = accumulators[1];
      tile[c_h] = accumulators[2];
      tile[c_h + c_c] = accumulators[3];
    }
  }
}

// MI x NJ tensor-core products of 16 k each on 16-bit operands (see mma_f16_f32).
template <MmaInput Input, int MI, int NJ, bool LhsWords, bool RhsWords, bool LhsMatrices, class ARef, class BRef>
__device__ __forceinline__ void mma_tiles(ARef a, int a_k, int a_mi, int a_h, BRef b, int b_k, int b_nj, int b_c, int b_t, float* c, int c_mi,
                                          int c_h, int c_nj, int c_c) {
  const Lane lane = lane_of_thread();
  const int g = lane.g, t = lane.t;
  // The mma's rows g and g + 8 are the thread's own rows h = 0 and 1 (shared by lanes 4g..4g+3).
  uint32_t a_fragments[MI][4];
  if constexpr (LhsMatrices) {
    // Lane L addresses row L % 8 of matrix L / 8: rows h = (L / 8) % 2 of lane group L % 8,
    // whose operand lane 4 (L % 8) holds, at k = 8 (L / 16).
    const int matrix = g / 2, group = 4 * g % 8 + t;
    const ARef rows = operand_of_lane(a, 4 * group) + (matrix % 2) * a_h + (matrix / 2) * 8;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) load_matrices(address_of(rows + mi * a_mi), a_fragments[mi]);
  } else {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const ARef row = a + mi * a_mi;
      a_fragments[mi][0] = fragment_register<LhsWords>(row + 2 * t * a_k, a_k);
      a_fragments[mi][1] = fragment_register<LhsWords>(row + a_h + 2 * t * a_k, a_k);
      a_fragments[mi][2] = fragment_register<LhsWords>(row + (2 * t + 8) * a_k, a_k);
      a_fragments[mi][3] = fragment_register<LhsWords>(row + a_h + (2 * t + 8) * a_k, a_k);
    }
  }
  // The mma's column g: that of the lanes with lane % 4 == g / 2, their cc = g % 2.
  const BRef column = b + (g / 2 - t) * b_t + (g % 2) * b_c;
  uint32_t b_fragments[NJ][2];
#pragma unroll
  for (int nj = 0; nj < NJ; ++nj) {
    b_fragments[nj][0] = fragment_register<RhsWords>(column + nj * b_nj + 2 * t * b_k, b_k);
    b_fragments[nj][1] = fragment_register<RhsWords>(column + nj * b_nj + (2 * t + 8) * b_k, b_k);
  }
  multiply_tiles<Input, MI, NJ>(a_fragments, b_fragments, c, c_mi, c_h, c_nj, c_c);
}

}  // namespace detail

// A warp's MI x NJ tiles of 16 rows x 8 columns, each accumulating a product over 16 k, by
// tensor cores: for the calling thread's rows (mi, h < 2) and columns (nj, cc < 2),
//   c[mi c_mi + h c_h + nj c_nj + cc c_c] += sum over k < 16 of a[mi a_mi + h a_h + k a_k] * b[nj b_nj + cc b_c + k b_k]
// with f16 inputs widened to f32 (strides in elements). Every lane of the warp calls it together
// with the same MI, NJ and strides; a lane's `a` depends only on lane / 4, and `b` is the warp's
// b plus (lane % 4) b_t, so that column n of tile nj is at the warp's b + (n / 2) b_t + nj b_nj +
// (n % 2) b_c. With LhsWords (RhsWords), a_k (b_k) is 1 and every element a lane loads at an even
// k is 4-byte aligned: each pair of k is then one load. With LhsMatrices, a is in shared memory,
// a_k is 1, and every lane's rows start 16-byte aligned at k = 0 and 8 (a, a_mi and a_h are
// multiples of 8 elements): each tile's fragments are then one ldmatrix.x4. An operand is a
// pointer to 16-bit elements or a RotatedRows of them.
template <int MI, int NJ, bool LhsWords = false, bool RhsWords = false, bool LhsMatrices = false, class ARef, class BRef>
__device__ __forceinline__ void mma_f16_f32(ARef a, int a_k, int a_mi, int a_h, BRef b, int b_k, int b_nj, int b_c, int b_t, float* c, int c_mi,
                                            int c_h, int c_nj, int c_c) {
  detail::mma_tiles<MmaInput::F16, MI, NJ, LhsWords, RhsWords, LhsMatrices>(a, a_k, a_mi, a_h, b, b_k, b_nj, b_c, b_t, c, c_mi, c_h, c_nj,
                                                                            c_c);
}

// mma_f16_f32 with bf16 inputs.
template <int MI, int NJ, bool LhsWords = false, bool RhsWords = false, bool LhsMatrices = false, class ARef, class BRef>
__device__ __forceinline__ void mma_bf16_f32(ARef a, int a_k, int a_mi, int a_h, BRef b, int b_k, int b_nj, int b_c, int b_t, float* c, int c_mi,
                                             int c_h, int c_nj, int c_c) {
  detail::mma_tiles<MmaInput::BF16, MI, NJ, LhsWords, RhsWords, LhsMatrices>(a, a_k, a_mi, a_h, b, b_k, b_nj, b_c, b_t, c, c_mi, c_h, c_nj,
                                                                             c_c);
}

// mma_f16_f32 over 8 k of f32 inputs, each rounded by tf32() (the kernel's products are of
// tf32() factors, so the rounding is the kernel's own).
template <int MI, int NJ, class ARef, class BRef>
__device__ __forceinline__ void mma_tf32_f32(ARef a, int a_k, int a_mi, int a_h, BRef b, int b_k, int b_nj, int b_c, int b_t, float* c, int c_mi,
                                             int c_h, int c_nj, int c_c) {
  const detail::Lane lane = detail::lane_of_thread();
  const int g = lane.g, t = lane.t;
  uint32_t a_fragments[MI][4];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const ARef row = a + mi * a_mi;
    a_fragments[mi][0] = detail::tf32_bits(row[t * a_k]);
    a_fragments[mi][1] = detail::tf32_bits(row[a_h + t * a_k]);
    a_fragments[mi][2] = detail::tf32_bits(row[(t + 4) * a_k]);
    a_fragments[mi][3] = detail::tf32_bits(row[a_h + (t + 4) * a_k]);
  }
  const BRef column = b + (g / 2 - t) * b_t + (g % 2) * b_c;
  uint32_t b_fragments[NJ][2];
#pragma unroll
  for (int nj = 0; nj < NJ; ++nj) {
    b_fragments[nj][0] = detail::tf32_bits(column[nj * b_nj + t * b_k]);
    b_fragments[nj][1] = detail::tf32_bits(column[nj * b_nj + (t + 4) * b_k]);
  }
  detail::multiply_tiles<MmaInput::TF32, MI, NJ>(a_fragments, b_fragments, c, c_mi, c_h, c_nj, c_c);
}

// ---- Launches -----------------------------------------------------------------------------------

#if defined(__CUDACC__)
// Queues `kernel` on the stream; the launch's error, if any.
template <class... Params, class... Args>
inline cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, Args... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(args...);
  return cudaGetLastError();
}

// The block's dynamic shared memory, which a launch sizes, as `name`.
#define ANSOR_DYNAMIC_SHARED_MEMORY(name) extern __shared__ __align__(16) unsigned char name[]
#else
// Compiled by a host compiler, the kernels run on an emulation of CUDA on the CPU, which
// supplies the launch and the dynamic shared memory (tests/cuda_emulation).
using ansor_cuda_emulation::launch;
#define ANSOR_DYNAMIC_SHARED_MEMORY(name) unsigned char* name = ansor_cuda_emulation::dynamic_shared_memory()
#endif

// ---- Host side ----------------------------------------------------------------------------------

// Device memory for one call's intermediate tensors, allocated and freed in stream order.
class DeviceWorkspace {
 public:
  explicit DeviceWorkspace(cudaStream_t stream) : stream_(stream) {}
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;
  ~DeviceWorkspace() {
    if (block_ != nullptr) cudaFreeAsync(block_, stream_);
  }

  // A block of `bytes` bytes (256-byte aligned, as cudaMalloc's), or the error.
  cudaError_t alloc(size_t bytes, char** block) {
    cudaError_t status = cudaMallocAsync(reinterpret_cast<void**>(&block_), bytes, stream_);
    *block = block_;
    return status;
  }

 private:
  cudaStream_t stream_;
  char* block_ = nullptr;
};

// The C interface's status: 0, or the cudaError_t of the first call that failed.
inline int status_of(cudaError_t error) { return static_cast<int>(error); }

// The synchronous entry points: the stream's work done, or its first error.
inline int synchronized(int status, cudaStream_t stream) {
  if (status != 0) return status;
  return status_of(cudaStreamSynchronize(stream));
}

}  // namespace ansor_rt

#endif  // ANSOR_CUDA_SUPPORT_H
