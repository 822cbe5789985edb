// The CPU's tensor intrinsics: AMX's tile products and the dot-product instructions of
// AVX512-BF16, AVX512-VNNI and AVX-VNNI, as the runtime wraps them
// (runtime/include/ansor/tensor_intrinsics.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "lower/tensor_intrinsic.h"
#include <ansor/scalar_support.h>

namespace ansor {

namespace {

// AMX tiles hold up to 16 rows. The table has tile rows of 16 down to kMinAmxTileRows rows per
// tile, for rows of lhs that come in other counts (56 pixels: 4 tiles of 14); fewer rows do less
// work per instruction than the dot products would.
constexpr int kAmxTileRows = 16;
constexpr int kMinAmxTileRows = 4;

// A row computing out[n] += sum over k < depth of lhs[k] * rhs[n * depth + k] for n < lanes:
// lhs broadcast, rhs packed with each lane's `depth` elements consecutive.
template <class Lhs, class Rhs, class Out>
void interpret_dot(const void* lhs, const void* rhs, void* out, int lanes, int depth, Out (*widen_lhs)(Lhs), Out (*widen_rhs)(Rhs)) {
  const Lhs* l = static_cast<const Lhs*>(lhs);
  const Rhs* r = static_cast<const Rhs*>(rhs);
  Out* o = static_cast<Out*>(out);
  for (int n = 0; n < lanes; ++n) {
    Out sum = o[n];
    for (int k = 0; k < depth; ++k) sum += widen_lhs(l[k]) * widen_rhs(r[n * depth + k]);
    o[n] = sum;
  }
}

// The sum an instruction accumulates: f32, or i32 wrapping on overflow as the integer ones do.
int32_t accumulate(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
float accumulate(float a, float b) { return a + b; }

// A row's nest run as it is written, with the call's extents and strides.
template <class Lhs, class Rhs, class Out>
void interpret_nest(const void* lhs, const void* rhs, void* out, const IntrinsicCallShape& shape, Out (*widen_lhs)(Lhs),
                    Out (*widen_rhs)(Rhs)) {
  const Lhs* l = static_cast<const Lhs*>(lhs);
  const Rhs* r = static_cast<const Rhs*>(rhs);
  Out* o = static_cast<Out*>(out);
  for_each_nest_point(shape, [&](int64_t lo, int64_t ro, int64_t oo) { o[oo] = accumulate(o[oo], widen_lhs(l[lo]) * widen_rhs(r[ro])); });
}

template <class T>
int32_t int_value(T x) {
  return x;
}

TensorIntrinsic dot_row(std::string name, DType lhs, DType rhs, DType out, int lanes, int depth, std::string feature, std::string isa,
                        std::string function, std::function<void(const void*, const void*, void*)> interpret) {
  TensorIntrinsic row;
  row.name = std::move(name);
  row.extents = {lanes, depth};
  row.reduces = {false, true};
  row.lhs = {lhs, {0, 1}};
  row.rhs = {rhs, {depth, 1}};
  row.out = {out, {1, 0}};
  row.required_features = {std::move(feature)};
  row.isa = std::move(isa);
  row.emit = [function](const std::string& l, const std::string& r, const std::string& o, const IntrinsicCallShape&) {
    return fmt::format("ansor_rt::{}({}, {}, {});", function, l, r, o);
  };
  row.interpret = [interpret = std::move(interpret)](const void* l, const void* r, void* o, const IntrinsicCallShape&) { interpret(l, r, o); };
  return row;
}

// AMX: out[R MT × 16 NT] += lhs[R MT × 16 Q kb] · rhs, over kb steps of 16 Q (a tile row of 64
// bytes) in one call, the accumulator tiles kept in tile registers across the steps; R rows per
// A and C tile (16, or fewer where the rows of lhs come in other counts: a convolution's 56
// pixels are 4 tiles of 14). The nest is (step, m, k / Q, n, k % Q): lhs rows any stride apart,
// its 16 Q elements of a step consecutive; rhs packed [step][k / Q][n][k % Q], the K-interleaved
// B tiles side by side; out rows any stride apart.
template <class Lhs, class Rhs, class Out>
TensorIntrinsic amx_row(const std::string& kind, DType lhs, DType rhs, DType out, int mt, int nt, int r, const std::string& feature,
                        Out (*widen_lhs)(Lhs), Out (*widen_rhs)(Rhs)) {
  const int64_t q = 4 / static_cast<int64_t>(sizeof(Lhs)), m = r * mt, n = 16 * nt;
  TensorIntrinsic row;
  row.name = r == kAmxTileRows ? fmt::format("amx_{}_{}x{}", kind, m, n) : fmt::format("amx_{}_{}x{}_r{}", kind, m, n, r);
  row.extents = {kAnyExtent, m, 16, n, q};
  row.reduces = {true, false, true, false, true};
  row.lhs = {lhs, {16 * q, kAnyStride, q, 0, 1}};
  row.rhs = {rhs, {16 * n * q, 0, n * q, q, 1}};
  row.out = {out, {0, kAnyStride, 0, 1, 0}};
  row.required_features = {"amx-tile", feature};
  row.tile_rows = r;
  const std::string function = r == kAmxTileRows ? fmt::format("amx_dot_{}_{}<{}, {}>", kind, out == DType::F32 ? "f32" : "i32", mt, nt)
                                                 : fmt::format("amx_dot_{}_{}<{}, {}, {}>", kind, out == DType::F32 ? "f32" : "i32", mt, nt, r);
  row.emit = [function](const std::string& l, const std::string& r, const std::string& o, const IntrinsicCallShape& shape) {
    return fmt::format("ansor_rt::{}({}, {}, {}, {}, {}, {});", function, l, shape.lhs_strides[1], r, o, shape.out_strides[1],
                       shape.extents[0]);
  };
  row.interpret = [widen_lhs, widen_rhs](const void* l, const void* r, void* o, const IntrinsicCallShape& shape) {
    interpret_nest<Lhs, Rhs, Out>(l, r, o, shape, widen_lhs, widen_rhs);
  };
  row.thread_setup = "ansor_rt::amx_begin()";
  row.thread_teardown = "ansor_rt::amx_end();";
  return row;
}

// Every tile count the 8 tile registers hold (MT × NT accumulators, MT lhs and NT rhs tiles) for
// every row count of a tile from 16 down to kMinAmxTileRows. The rows of more rows per tile come
// first: lowering takes the first row a nest matches, and a nest of 16 rows is one tile of 16,
// not two of 8 (the sampler draws the most rows per tile that divide the stage's rows).
template <class Lhs, class Rhs, class Out>
void add_amx_rows(std::vector<TensorIntrinsic>& table, const std::string& kind, DType lhs, DType rhs, DType out, const std::string& feature,
                  Out (*widen_lhs)(Lhs), Out (*widen_rhs)(Rhs)) {
  for (int r = kAmxTileRows; r >= kMinAmxTileRows; --r)
    for (int mt : {2, 1})
      for (int nt : {2, 1}) table.push_back(amx_row<Lhs, Rhs, Out>(kind, lhs, rhs, out, mt, nt, r, feature, widen_lhs, widen_rhs));
}

// The 8-bit rows of one instruction: u8 broadcast times s8 lanes, and s8 broadcast times u8 lanes.
template <int Lanes>
std::array<TensorIntrinsic, 2> byte_rows(const std::string& prefix, const std::string& feature, const std::string& isa) {
  const std::string lanes = std::to_string(Lanes);
  return {dot_row(prefix + "_dot4x" + lanes + "_u8s8", DType::U8, DType::I8, DType::I32, Lanes, 4, feature, isa, "dot_u8s8x4_i32x" + lanes,
                  [](const void* l, const void* r, void* o) {
                    interpret_dot<uint8_t, int8_t, int32_t>(l, r, o, Lanes, 4, int_value<uint8_t>, int_value<int8_t>);
                  }),
          dot_row(prefix + "_dot4x" + lanes + "_s8u8", DType::I8, DType::U8, DType::I32, Lanes, 4, feature, isa, "dot_s8u8x4_i32x" + lanes,
                  [](const void* l, const void* r, void* o) {
                    interpret_dot<int8_t, uint8_t, int32_t>(l, r, o, Lanes, 4, int_value<int8_t>, int_value<uint8_t>);
                  })};
}

const std::vector<TensorIntrinsic>& cpu_rows() {
  static const std::vector<TensorIntrinsic> table = [] {
    std::vector<TensorIntrinsic> t;
    add_amx_rows<uint16_t, uint16_t, float>(t, "bf16", DType::BF16, DType::BF16, DType::F32, "amx-bf16", ansor_rt::bf16_to_f32, ansor_rt::bf16_to_f32);
    add_amx_rows<uint8_t, int8_t, int32_t>(t, "u8s8", DType::U8, DType::I8, DType::I32, "amx-int8", int_value<uint8_t>, int_value<int8_t>);
    add_amx_rows<int8_t, int8_t, int32_t>(t, "s8s8", DType::I8, DType::I8, DType::I32, "amx-int8", int_value<int8_t>, int_value<int8_t>);
    add_amx_rows<int8_t, uint8_t, int32_t>(t, "s8u8", DType::I8, DType::U8, DType::I32, "amx-int8", int_value<int8_t>, int_value<uint8_t>);
    add_amx_rows<uint8_t, uint8_t, int32_t>(t, "u8u8", DType::U8, DType::U8, DType::I32, "amx-int8", int_value<uint8_t>, int_value<uint8_t>);
    t.push_back(dot_row("avx512bf16_dot2x16", DType::BF16, DType::BF16, DType::F32, 16, 2, "avx512bf16", "avx512",
                                              "dot_bf16x2_f32x16", [](const void* l, const void* r, void* o) {
                                                interpret_dot<uint16_t, uint16_t, float>(l, r, o, 16, 2, ansor_rt::bf16_to_f32, ansor_rt::bf16_to_f32);
                                              }));
    for (TensorIntrinsic& row : byte_rows<16>("avx512vnni", "avx512vnni", "avx512")) t.push_back(std::move(row));
    // AVX-VNNI: VPDPBUSD on ymm registers, for AVX2 machines that have it (Alder Lake and later
    // Intel cores, Zen 5 built without AVX-512).
    for (TensorIntrinsic& row : byte_rows<8>("avxvnni", "avxvnni", "avx2")) t.push_back(std::move(row));
    return t;
  }();
  return table;
}

}  // namespace

int64_t operand_span(const IntrinsicCallShape& shape, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t a = 0; a < shape.extents.size(); ++a) last += (shape.extents[a] - 1) * strides[a];
  return last + 1;
}

void for_each_nest_point(const IntrinsicCallShape& shape, const std::function<void(int64_t lhs, int64_t rhs, int64_t out)>& visit) {
  const size_t axes = shape.extents.size();
  std::vector<int64_t> at(axes, 0);
  for (;;) {
    int64_t lo = 0, ro = 0, oo = 0;
    for (size_t a = 0; a < axes; ++a) {
      lo += at[a] * shape.lhs_strides[a];
      ro += at[a] * shape.rhs_strides[a];
      oo += at[a] * shape.out_strides[a];
    }
    visit(lo, ro, oo);
    size_t a = axes;
    while (a > 0 && ++at[a - 1] == shape.extents[a - 1]) at[--a] = 0;
    if (a == 0) return;
  }
}

IntrinsicTable cpu_tensor_intrinsics() { return cpu_rows(); }

namespace {

// The compute capability of a CUDA target (sm_90: 90).
int cuda_arch(const Target& target) { return target.cpu.rfind("sm_", 0) == 0 ? std::atoi(target.cpu.c_str() + 3) : 0; }

bool offers(const Target& target, const TensorIntrinsic& row) {
  if (target.kind == Target::Kind::Cuda) return cuda_arch(target) >= row.min_cuda_arch;
  const bool has_all = std::all_of(row.required_features.begin(), row.required_features.end(),
                                   [&](const std::string& f) { return target.has_tensor_feature(f); });
  return has_all && (row.isa.empty() || target.isa == row.isa);
}

}  // namespace

std::vector<const TensorIntrinsic*> tensor_intrinsics_for(const Target& target) {
  std::vector<const TensorIntrinsic*> out;
  for (const TensorIntrinsic& row : target.kind == Target::Kind::Cuda ? cuda_tensor_intrinsics() : cpu_rows())
    if (offers(target, row)) out.push_back(&row);
  return out;
}

const TensorIntrinsic* find_tensor_intrinsic(const std::string& name) {
  for (IntrinsicTable table : {cpu_tensor_intrinsics(), cuda_tensor_intrinsics()})
    for (const TensorIntrinsic& row : table)
      if (row.name == name) return &row;
  return nullptr;
}

}  // namespace ansor
