// Tensor intrinsics: instructions that compute a small tensor operation at once (a dot product
// of bf16 pairs or int8 quads into each lane of a vector on AVX512-BF16 and VNNI, tiles of a
// matrix product summed over a run of reduction steps on AMX, a warp's matrix product on the
// tensor cores of a GPU).
// Each is one row of a table: the loop nest it computes and the operand layouts it reads, the
// target features it needs, how the code generator prints it and what it computes for the
// interpreter. Lowering matches a loop nest that a schedule marks `tensorize` against the rows
// its target offers (lower/tensorize.h); a backend exposes its kind's rows (backend/backend.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "target/target.h"

namespace ansor {

// One operand of an intrinsic: its element type and the distance, in elements, between the
// elements that consecutive iterations of each axis of the intrinsic's loop nest address (0:
// the operand does not vary along that axis; it is broadcast).
struct IntrinsicOperand {
  DType dtype = DType::F32;
  std::vector<int64_t> strides;
};

// An extent or stride a row leaves to the nest it computes: the call takes it as an argument
// (an AMX call's number of reduction steps, the row strides of its matrices).
inline constexpr int64_t kAnyExtent = 0;
inline constexpr int64_t kAnyStride = -1;

// What one call of a row computes where the row leaves extents or strides open: the nest's
// extents and each operand's strides, all of them known.
struct IntrinsicCallShape {
  std::vector<int64_t> extents;
  std::vector<int64_t> lhs_strides, rhs_strides, out_strides;
  // A warp row's: the distance between the rhs elements of lanes t and t + 1 of a row of four
  // (the columns of their outputs).
  int64_t rhs_lane_stride = 0;
  // A warp row's with 16-bit operands: whether each lane loads the consecutive k of one register
  // of its lhs (rhs) fragment as one aligned 32-bit word (k contiguous, every pair at an even
  // element of a buffer of the block), rather than as two 16-bit elements.
  bool lhs_word_pairs = false, rhs_word_pairs = false;
  // A warp row's with 16-bit operands: whether each lane group's lhs rows start 16-byte aligned
  // at k 0 and 8 of a shared buffer, so that the warp loads each tile's lhs fragments as four
  // 8 x 8 matrices (ldmatrix.x4) rather than register by register.
  bool lhs_matrices = false;
};

// An intrinsic computes the loop nest
//   for a_0 < extents[0]: ... for a_n < extents[n]:  out[o] += T(lhs[l]) * T(rhs[r])
// with T the conversion to out's type and o, l, r linear in the axes with the operands' strides.
// `lhs` and `rhs` may appear in either order in a kernel's product: their types tell them apart.
struct TensorIntrinsic {
  std::string name;                 // "avx512bf16_dot2x16"
  std::vector<int64_t> extents;     // outermost axis first; kAnyExtent: any positive extent
  std::vector<bool> reduces;        // per axis: whether it is summed over (o does not vary along it)
  IntrinsicOperand lhs, rhs, out;  // strides kAnyStride where the call takes them
  // The target's tensor features that the instruction needs (Target::tensor_features) and its
  // vector ISA (empty: any); a row is offered only to targets with all of them.
  std::vector<std::string> required_features;
  std::string isa;
  // The statement that computes one call, given the C expressions of the addresses of the
  // operands' first elements (lhs, rhs, out) and the call's shape.
  std::function<std::string(const std::string& lhs, const std::string& rhs, const std::string& out, const IntrinsicCallShape& shape)> emit;
  // What one call computes, for the interpreter: out += lhs · rhs over the elements at those
  // addresses, laid out as the shape's strides say.
  std::function<void(const void* lhs, const void* rhs, void* out, const IntrinsicCallShape& shape)> interpret;
  // Statements a thread runs before its first call in a kernel call and after its last (AMX
  // loads its tile configuration, and releases the tiles); `thread_setup` is a boolean
  // expression, false where the thread cannot use the instruction (the kernel then fails).
  // Empty: none.
  std::string thread_setup, thread_teardown;
  // A tile row (AMX): the rows of each lhs and out tile (the nest's rows are a whole number of
  // tiles of them). 0: not a tile row.
  int64_t tile_rows = 0;
  // A warp row (a GPU's tensor cores): the lanes of a warp call it together, each with its own
  // nest, and the instruction takes each operand from the lanes that hold its fragments. Lane
  // 4g + t computes two rows of each of `warp_m_tiles` tiles of 16 rows (rows g and g + 8 of the
  // instruction's tile) and two columns of each of `warp_n_tiles` tiles of 8 (columns 2t and
  // 2t + 1): its lhs rows depend on g only, its rhs columns are rhs_lane_stride × t from lane g's
  // (lower/tensorize.h checks both). 0: not a warp row.
  int64_t warp_m_tiles = 0, warp_n_tiles = 0;
  // CUDA rows: the least compute capability with the instruction (80: sm_80).
  int min_cuda_arch = 0;
  // The operands are f32 values the kernel rounds by tf32() (TF32 products): a product of tf32()
  // factors matches only such rows, and such rows only such products.
  bool tf32_operands = false;
};

// The span of elements an operand of a call covers: one past the largest offset it addresses.
int64_t operand_span(const IntrinsicCallShape& shape, const std::vector<int64_t>& strides);
// Calls `visit` with the offsets of lhs, rhs and out at each point of the call's nest, in the
// nest's order.
void for_each_nest_point(const IntrinsicCallShape& shape, const std::function<void(int64_t lhs, int64_t rhs, int64_t out)>& visit);

using IntrinsicTable = std::span<const TensorIntrinsic>;

// The CPU rows, and those of them that `target` offers, AMX's before the dot products (a tile
// of a matrix product does the most work per instruction).
IntrinsicTable cpu_tensor_intrinsics();
// The CUDA rows: tensor cores' mma.sync (lower/mma_intrinsics.cpp).
IntrinsicTable cuda_tensor_intrinsics();
// The rows of the target's kind that it offers.
std::vector<const TensorIntrinsic*> tensor_intrinsics_for(const Target& target);
// The row of that name, null when there is none.
const TensorIntrinsic* find_tensor_intrinsic(const std::string& name);

}  // namespace ansor
