// A lowered kernel: its buffers and its loop program, ready for a code generator.
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lower/stmt.h"
#include "lower/tensor_intrinsic.h"

namespace ansor {

enum class BufferScope : uint8_t {
  Param,      // a kernel argument (input or output)
  Workspace,  // an intermediate computed at the root: the whole tensor, allocated per call
  Local,      // an intermediate computed inside another stage: the region one iteration needs,
              // on the stack
  LocalHeap,  // a Local buffer too large for the stack: from the runtime's allocator
  Shared,     // GPU shared memory, per thread block
};

// A shared buffer's rows rotated against bank conflicts (lower/shared_layout.h): the rows (of
// `row` elements, the innermost dimension) are cut into chunks of `chunk` elements, and row r's
// chunks are stored rotated by r / rows_per_step places. Element accesses keep their logical
// offset o (indices times strides); o is stored at rotated_offset(o).
struct RowRotation {
  int64_t row = 0;  // 0: not rotated
  int64_t chunk = 0;
  int64_t rows_per_step = 1;

  bool rotates() const { return row > 0; }
  // Where logical offset `offset` is stored (itself where the rows are not rotated).
  int64_t rotated_offset(int64_t offset) const;
  Expr rotated_offset(const Expr& offset) const;
};

struct Buffer {
  std::string name;  // the tensor's name
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // row-major unless storage_align padded a dimension
  BufferScope scope = BufferScope::Param;
  bool is_output = false;
  bool is_const = false;
  RowRotation rotation;  // shared buffers only

  int64_t num_elements() const;  // the span its strides address, padding included
};

// An input stored in the loop order of its consumer: element `coords` (variables with
// extents `shape`, iterated by the packing program) of the packed tensor holds the plain
// tensor's element at `source_index` (expressions of coords; out of bounds where a ragged loop
// overshoots, which packs as 0). The consumer reads element `access`, expressions of its loop
// variables: a coordinate is a loop itself or, for a fused loop of which the tensor's index uses
// only a part, that part ((loop / d) % m), so loops that do not index the tensor never
// replicate it. A const input is packed once by the caller (the library's pack function) and
// passed packed; any other input is packed by the kernel itself, at the start of each call, into
// a workspace named `buffer`.
struct PackedLayout {
  std::string tensor;
  std::string buffer;  // what the consumer reads: the tensor itself, or its workspace copy
  std::vector<Var> coords;
  std::vector<int64_t> shape;
  std::vector<Expr> source_index;
  std::vector<Expr> access;
};

// How the vector loops that store a buffer treat memory (a stage's prefetch_bytes and
// stream_stores pragmas, CPU only): each contiguous vector load of a `prefetched` tensor is
// preceded by a prefetch of the address `prefetch_bytes` further on, and with `stream_stores`
// contiguous vector stores into the buffer (a kernel output) bypass the caches. Neither
// changes what the program computes.
struct MemoryHints {
  int prefetch_bytes = 0;
  std::vector<std::string> prefetched;  // input parameters at least as large as the stored region
  bool stream_stores = false;
};

// The threads of a GPU block along x, y and z.
using ThreadDims = std::array<int64_t, 3>;

// A buffer of a GPU block's shared memory, at its offset in bytes.
struct SharedPlacement {
  std::string buffer;
  int64_t offset = 0;
};

// One kernel launch of a GPU program: a top-level statement, its outermost loops bound to block
// indices giving the grid and the loops bound to thread indices inside giving the block
// (lower/gpu_launch.h).
struct GpuLaunch {
  Stmt body;                                // inside the block loops
  std::vector<const ForNode*> block_loops;  // outermost first
  std::array<int64_t, 3> grid = {1, 1, 1};
  ThreadDims block = {1, 1, 1};
  std::vector<SharedPlacement> shared;  // the shared buffers of one block
  int64_t shared_bytes = 0;
  bool shared_opt_in = false;  // more dynamic shared memory than a kernel gets without asking
  int64_t local_bytes = 0;     // of one thread's local buffers, all at once (an upper bound)
  int thread_reductions = 0;   // reductions across threads, each with a little shared memory of its own
  // The loops bound to a block or thread index with fewer iterations than the blocks or threads
  // along it: the blocks or threads beyond skip the body.
  std::set<const ForNode*> tail_guards;
  // Some vector copy moves a kernel argument, whose alignment only the call knows: the launch
  // exists in two variants, for arguments aligned to vectors and not.
  bool aligned_variants = false;

  int64_t threads() const { return block[0] * block[1] * block[2]; }
  bool guards(const ForNode* loop) const { return tail_guards.count(loop) > 0; }
};

// A vectorized GPU loop printed as one vector load and one vector store of `lanes` consecutive
// elements.
struct VectorCopy {
  int lanes = 0;
  bool of_arguments = false;  // it loads or stores a kernel argument (GpuLaunch::aligned_variants)
  // Where set, the copy stores zeros instead where this is false (a shared copy's vector past
  // its tensor's edge); the same on every lane of the vector.
  Expr copies_if;
};

// The call of `intrinsic` that a tensorized loop is printed as.
struct TensorCall {
  const TensorIntrinsic* intrinsic = nullptr;
  // The first element of each operand (every variable of the nest at 0).
  struct Operand {
    std::string buffer;
    std::vector<Expr> indices;
  };
  Operand lhs, rhs, out;
  // The nest's extents and the operands' strides (what the row leaves open filled in).
  IntrinsicCallShape shape;
  // Where the nest's products are zero (a padding read through a select), the call is skipped:
  // it runs only where `guard` holds (null: always).
  Expr guard;
};

// The loop program of a kernel, every decision taken: what a code generator prints, what the
// interpreter runs and what the cost model's features describe.
struct LoweredKernel {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<int> params;  // indices into buffers: inputs in order, then outputs
  std::vector<PackedLayout> packed_inputs;
  // Per packed input, the program that packs it: parameters (plain tensor, packed tensor).
  std::vector<LoweredKernel> packers;
  // Inputs that are not const, packed by the body's first statements into workspaces.
  std::vector<PackedLayout> packed_in_kernel;
  Stmt body;
  // Per stored buffer, the auto_unroll_max_step its statements were unrolled under: the largest
  // of its stage's and those of the stages it is computed inside (absent: none). The unrolled
  // loops show the pragma's effect; the cost model's features also report its value.
  std::map<std::string, int> auto_unroll_max_steps;
  // Per stored buffer, its stage's memory hints (absent: none).
  std::map<std::string, MemoryHints> memory_hints;

  // How the code generator of the target it was lowered for prints it (lower/codegen_decisions.h).
  // The tables are keyed by statements of `body`, which copies of the kernel share.
  DType index_dtype = DType::I64;  // of loop variables and index arithmetic
  std::vector<GpuLaunch> launches;  // a GPU program's, one per top-level statement; none on a CPU
  std::map<const ForNode*, VectorCopy> vector_copies;  // GPU
  // CPU: the first store of each run of accumulation steps combined as one balanced tree, and
  // the number of statements in the run.
  std::map<const StmtNode*, size_t> horizontal_reductions;
  // CPU: the call each tensorized loop is printed as.
  std::map<const ForNode*, TensorCall> tensor_calls;
  // The target's: vector loads of a prefetched tensor are prefetched once per cache line.
  int cache_line_bytes = 64;

  const Buffer* find_buffer(const std::string& name) const;
  const PackedLayout* find_packed(const std::string& tensor) const;
  // The program that packs a const input, null when its layout is not rewritten.
  const LoweredKernel* find_packer(const std::string& tensor) const;
  // The auto_unroll_max_step in force where `buffer` is stored, 0 for none.
  int auto_unroll_max_step(const std::string& buffer) const;
  // The memory hints of the vector loops that store `buffer`, null for none.
  const MemoryHints* find_memory_hints(const std::string& buffer) const;
  // The vector copy a vectorized loop is printed as, null for vector statements.
  const VectorCopy* find_vector_copy(const ForNode* loop) const;
  // The call a tensorized loop is printed as, null for other loops.
  const TensorCall* find_tensor_call(const ForNode* loop) const;
  // The statements a horizontal reduction starting at `store` combines, 0 where none starts.
  size_t horizontal_reduction_length(const StmtNode* store) const;
};

// The logical offset of an element of a buffer, in elements (not simplified): its indices times
// the buffer's strides.
Expr flat_index(const Buffer& buffer, const std::vector<Expr>& indices);
// Where the element is stored: its logical offset, rotated where the buffer's rows are.
Expr element_offset(const Buffer& buffer, const std::vector<Expr>& indices);

// Row-major strides of a shape.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);

}  // namespace ansor
