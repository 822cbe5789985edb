/* The ansor runtime: what kernels emitted by ansor-gen link against.
 *
 * A C interface, so that kernel archives compiled by clang++ link into programs built with any
 * compiler. It provides the thread pool that parallel loops run on (never an OpenMP runtime that
 * could clash with the user's), aligned workspace for intermediate tensors, and the descriptor
 * types with which a generated library lists its kernels. */
#ifndef ANSOR_RUNTIME_H
#define ANSOR_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Threads ------------------------------------------------------------------------------ */

/* The body of a parallel loop: runs iterations [begin, end) with the caller's context. */
typedef void (*ansor_task_fn)(int64_t begin, int64_t end, void* context);

/* Runs body over [0, n) split into contiguous chunks, one per thread, and returns when all
 * chunks are done. The calling thread runs one chunk itself. A call made from inside a parallel
 * region, or while another thread of the program holds the pool, runs the whole range on the
 * calling thread, so nesting and concurrent callers are safe. Returns 0. */
int ansor_parallel_for(int64_t n, ansor_task_fn body, void* context);

/* The number of threads parallel loops use. By default all cores this process may run on,
 * overridden by the environment variable ANSOR_NUM_THREADS (read at first use), and by
 * ansor_set_num_threads. */
int ansor_get_num_threads(void);

/* Sets the thread count; a value <= 0 restores the default. Takes effect at the next parallel
 * loop. Must not be called from inside a parallel loop. */
void ansor_set_num_threads(int num_threads);

/* How the pool's idle threads wait for the next loop at the current thread count: they poll
 * with *pauses pause instructions, then *yields sched_yield calls, then sleep until woken. A pool
 * with more threads than the process has CPUs does not pause (*pauses is 0). A program that runs
 * another thread runtime beside ansor can give it the same spin (as the benchmarks give OpenMP
 * GOMP_SPINCOUNT). */
void ansor_get_spin_wait(int* pauses, int* yields);

/* A user-supplied executor: it must run body over [0, n) in any partition into chunks and
 * return when all have finished. */
typedef void (*ansor_parallel_backend)(int64_t n, ansor_task_fn body, void* context, void* user);

/* Hands parallel loops to the user's own executor (for programs that have a thread pool of
 * their own); NULL restores the built-in pool. */
void ansor_set_parallel_backend(ansor_parallel_backend backend, void* user);

/* ---- Workspace ---------------------------------------------------------------------------- */

/* Memory for intermediate tensors: aligned to 64 bytes, NULL when it cannot be allocated.
 * Safe to call from any thread, including inside parallel loops; recently freed blocks are
 * reused per thread, so a kernel called in a loop does not go back to malloc every time.
 * A request for 0 bytes returns a distinct block that must be freed like any other. A block
 * may be freed on any thread; freeing NULL does nothing. */
void* ansor_workspace_alloc(size_t bytes);
void ansor_workspace_free(void* block);

/* ---- Kernel descriptors ------------------------------------------------------------------- */

typedef enum ansor_dtype {
  ANSOR_DTYPE_F32 = 0,
  ANSOR_DTYPE_F64 = 1,
  ANSOR_DTYPE_F16 = 2, /* stored as uint16_t (IEEE binary16) */
  ANSOR_DTYPE_BF16 = 3, /* stored as uint16_t (bfloat16) */
  ANSOR_DTYPE_I8 = 4,
  ANSOR_DTYPE_I16 = 5,
  ANSOR_DTYPE_I32 = 6,
  ANSOR_DTYPE_I64 = 7,
  ANSOR_DTYPE_U8 = 8,
  ANSOR_DTYPE_BOOL = 9 /* stored as one byte, 0 or 1 */
} ansor_dtype;

/* Size in bytes of one element of the dtype. */
size_t ansor_dtype_size(ansor_dtype dtype);

/* One argument of a kernel: inputs come first in declaration order, then outputs. */
typedef struct ansor_tensor_info {
  const char* name;
  ansor_dtype dtype;
  int rank;
  const int64_t* shape;
  int is_output; /* 1 for outputs */
  int is_const;  /* 1 for inputs declared `const` (weights) */
} ansor_tensor_info;

/* One kernel of a generated library, for programs that handle kernels generically (the demo,
 * the measurement runner): call(args) calls the typed function with args in argument order.
 * A schedule may store const inputs in the order its loops read them: call_packed takes those
 * inputs packed by pack() (the typed functions LIB_K_packed and LIB_K_pack_W); call packs them
 * itself on every call. */
/* The layout version of ansor_kernel_info below; a descriptor compiled against another
 * runtime.h has another, and must not be used. */
#define ANSOR_KERNEL_INFO_VERSION 2

/* Where a kernel's arguments live. */
typedef enum ansor_device {
  ANSOR_DEVICE_CPU = 0,  /* host memory */
  ANSOR_DEVICE_CUDA = 1  /* CUDA device memory; calls return once the GPU has finished */
} ansor_device;

typedef struct ansor_kernel_info {
  int abi_version;           /* ANSOR_KERNEL_INFO_VERSION when the kernel was compiled */
  const char* name;          /* the kernel's name in kernels.def */
  const char* workload_key;  /* hash of the canonical computation */
  const char* schedule;      /* where the schedule came from: "naive", "default", "tuned", ... */
  double flops;              /* floating-point operations of one call */
  int num_args;
  const ansor_tensor_info* args;
  int (*call)(void* const* args);
  int (*call_packed)(void* const* args);
  /* Packs const input `arg` (an index into args); returns non-zero for other arguments. */
  int (*pack)(int arg, const void* plain, void* packed);
  /* Elements of the packed form of const input `arg`, 0 for other arguments. */
  int64_t (*packed_elements)(int arg);
  ansor_device device; /* where args (and pack's buffers) point */
} ansor_kernel_info;

/* Finds a kernel by name in a library's table; NULL when absent. */
const ansor_kernel_info* ansor_find_kernel(const ansor_kernel_info* table, int count,
                                           const char* name);

#ifdef __cplusplus
}
#endif

#endif /* ANSOR_RUNTIME_H */
