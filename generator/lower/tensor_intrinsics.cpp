// The CPU's tensor intrinsics: the dot-product instructions of AVX512-BF16, AVX512-VNNI and
// AVX-VNNI, as the runtime wraps them (runtime/include/ansor/tensor_intrinsics.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lower/tensor_intrinsic.h"
#include <ansor/scalar_support.h>

namespace ansor {

namespace {

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

float bf16_value(uint16_t x) { return ansor_rt::bf16_to_f32(x); }
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
  row.emit = [function](const std::string& l, const std::string& r, const std::string& o) {
    return fmt::format("ansor_rt::{}({}, {}, {});", function, l, r, o);
  };
  row.interpret = std::move(interpret);
  return row;
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

const std::vector<TensorIntrinsic>& rows() {
  static const std::vector<TensorIntrinsic> table = [] {
    std::vector<TensorIntrinsic> t = {dot_row("avx512bf16_dot2x16", DType::BF16, DType::BF16, DType::F32, 16, 2, "avx512bf16", "avx512",
                                              "dot_bf16x2_f32x16", [](const void* l, const void* r, void* o) {
                                                interpret_dot<uint16_t, uint16_t, float>(l, r, o, 16, 2, bf16_value, bf16_value);
                                              })};
    for (TensorIntrinsic& row : byte_rows<16>("avx512vnni", "avx512vnni", "avx512")) t.push_back(std::move(row));
    // AVX-VNNI: VPDPBUSD on ymm registers, for AVX2 machines that have it (Alder Lake and later
    // Intel cores, Zen 5 built without AVX-512).
    for (TensorIntrinsic& row : byte_rows<8>("avxvnni", "avxvnni", "avx2")) t.push_back(std::move(row));
    return t;
  }();
  return table;
}

}  // namespace

IntrinsicTable cpu_tensor_intrinsics() { return rows(); }

std::vector<const TensorIntrinsic*> tensor_intrinsics_for(const Target& target) {
  std::vector<const TensorIntrinsic*> out;
  if (target.kind != Target::Kind::Cpu) return out;
  for (const TensorIntrinsic& row : rows()) {
    const bool has_all = std::all_of(row.required_features.begin(), row.required_features.end(),
                                     [&](const std::string& f) { return target.has_tensor_feature(f); });
    if (has_all && target.isa == row.isa) out.push_back(&row);
  }
  return out;
}

const TensorIntrinsic* find_tensor_intrinsic(const std::string& name) {
  for (const TensorIntrinsic& row : rows())
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace ansor
