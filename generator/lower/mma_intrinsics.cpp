// The CUDA backend's tensor intrinsics: the tensor cores' mma.sync m16n8k16 with f16 or bf16
// inputs and m16n8k8 with TF32 inputs, f32 accumulators (sm_80 and later), as the runtime wraps
// them for a warp's tile of several instruction tiles (ansor_rt::mma_f16_f32, mma_tf32_f32,
// runtime/include/ansor/cuda_support.h).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lower/tensor_intrinsic.h"
#include <ansor/scalar_support.h>

namespace ansor {

namespace {

// The instruction's tile: 16 rows, 8 columns, 16 reduction steps (8 for TF32: 32-bit operands);
// each lane holds 2 rows and 2 columns of its output tile.
constexpr int64_t kMmaRows = 16, kMmaCols = 8, kMmaDepth = 16, kTf32Depth = 8, kLaneRows = 2, kLaneCols = 2;
constexpr int kMmaMinArch = 80;

// One lane's nest, outermost first: (k: depth, mi: m_tiles, h: 2, nj: n_tiles, c: 2), the tile
// counts' axes left out where they are 1 (lowering drops loops of one iteration). The lane's
// rows of tile mi are lhs rows (mi, h) and its columns rhs columns (nj, c), each any stride
// apart; out holds the lane's 2 m_tiles × 2 n_tiles sums. `widen` gives an operand's value as
// the instruction takes it.
template <class In>
TensorIntrinsic mma_row(const std::string& kind, DType input, int64_t depth, int64_t m_tiles, int64_t n_tiles, float (*widen)(In)) {
  TensorIntrinsic row;
  row.name = fmt::format("mma_{}_m{}n{}", kind, kMmaRows * m_tiles, kMmaCols * n_tiles);
  row.lhs = {input, {}};
  row.rhs = {input, {}};
  row.out = {DType::F32, {}};
  // Axis positions in the nest, -1 where the axis is left out.
  int position = 0;
  auto add_axis = [&](int64_t extent, bool reduces, int64_t lhs, int64_t rhs, int64_t out) {
    row.extents.push_back(extent);
    row.reduces.push_back(reduces);
    row.lhs.strides.push_back(lhs);
    row.rhs.strides.push_back(rhs);
    row.out.strides.push_back(out);
    return position++;
  };
  const int k = add_axis(depth, true, kAnyStride, kAnyStride, 0);
  const int mi = m_tiles > 1 ? add_axis(m_tiles, false, kAnyStride, 0, kAnyStride) : -1;
  const int h = add_axis(kLaneRows, false, kAnyStride, 0, kAnyStride);
  const int nj = n_tiles > 1 ? add_axis(n_tiles, false, 0, kAnyStride, kAnyStride) : -1;
  const int c = add_axis(kLaneCols, false, 0, kAnyStride, kAnyStride);
  row.warp_m_tiles = m_tiles;
  row.warp_n_tiles = n_tiles;
  row.min_cuda_arch = kMmaMinArch;
  row.tf32_operands = input == DType::F32;
  const bool pairs = dtype_bytes(input) == 2;
  row.emit = [=](const std::string& l, const std::string& r, const std::string& o, const IntrinsicCallShape& shape) {
    auto stride = [](const std::vector<int64_t>& strides, int axis) { return axis < 0 ? int64_t{0} : strides[axis]; };
    // 16-bit operands say which fragments load their pairs of k as words, and whether lhs's are
    // loaded as matrices.
    const std::string matrices = shape.lhs_matrices ? ", true" : "";
    const std::string function = pairs ? fmt::format("mma_{}_f32<{}, {}, {}, {}{}>", kind, m_tiles, n_tiles, shape.lhs_word_pairs,
                                                     shape.rhs_word_pairs, matrices)
                                       : fmt::format("mma_{}_f32<{}, {}>", kind, m_tiles, n_tiles);
    return fmt::format("ansor_rt::{}({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});", function, l, shape.lhs_strides[k],
                       stride(shape.lhs_strides, mi), shape.lhs_strides[h], r, shape.rhs_strides[k], stride(shape.rhs_strides, nj),
                       shape.rhs_strides[c], shape.rhs_lane_stride, o, stride(shape.out_strides, mi), shape.out_strides[h],
                       stride(shape.out_strides, nj), shape.out_strides[c]);
  };
  // What the lane's nest computes; the lanes' exchange of fragments is the instruction's.
  row.interpret = [widen](const void* lhs, const void* rhs, void* out, const IntrinsicCallShape& shape) {
    const auto* a = static_cast<const In*>(lhs);
    const auto* b = static_cast<const In*>(rhs);
    auto* o = static_cast<float*>(out);
    for_each_nest_point(shape, [&](int64_t lo, int64_t ro, int64_t oo) { o[oo] += widen(a[lo]) * widen(b[ro]); });
  };
  return row;
}

const std::vector<TensorIntrinsic>& mma_rows() {
  static const std::vector<TensorIntrinsic> table = [] {
    std::vector<TensorIntrinsic> t;
    // A warp's tile of up to 4 × 4 instruction tiles: 64 accumulators per lane, which leaves
    // registers for the fragments and the addresses.
    for (int64_t m_tiles : {4, 2, 1})
      for (int64_t n_tiles : {4, 2, 1}) {
        t.push_back(mma_row<uint16_t>("f16", DType::F16, kMmaDepth, m_tiles, n_tiles, ansor_rt::f16_to_f32));
        t.push_back(mma_row<uint16_t>("bf16", DType::BF16, kMmaDepth, m_tiles, n_tiles, ansor_rt::bf16_to_f32));
        t.push_back(mma_row<float>("tf32", DType::F32, kTf32Depth, m_tiles, n_tiles, ansor_rt::tf32));
      }
    return t;
  }();
  return table;
}

}  // namespace

IntrinsicTable cuda_tensor_intrinsics() { return mma_rows(); }

}  // namespace ansor
