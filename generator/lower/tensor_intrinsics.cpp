// The CPU's tensor intrinsics: the dot-product instructions of AVX512-BF16 and AVX512-VNNI, as
// the runtime wraps them (runtime/include/ansor/tensor_intrinsics.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "lower/tensor_intrinsic.h"
#include <ansor/scalar_support.h>

namespace ansor {

namespace {

// A row computing out[n] += sum over k < depth of lhs[k] * rhs[n * depth + k] for n < 16 lanes:
// lhs broadcast, rhs packed with each lane's `depth` elements consecutive.
template <class Lhs, class Rhs, class Out>
void interpret_dot(const void* lhs, const void* rhs, void* out, int depth, Out (*widen_lhs)(Lhs), Out (*widen_rhs)(Rhs)) {
  const Lhs* l = static_cast<const Lhs*>(lhs);
  const Rhs* r = static_cast<const Rhs*>(rhs);
  Out* o = static_cast<Out*>(out);
  for (int n = 0; n < 16; ++n) {
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

TensorIntrinsic dot_row(std::string name, DType lhs, DType rhs, DType out, int depth, std::string feature, std::string function,
                        std::function<void(const void*, const void*, void*)> interpret) {
  TensorIntrinsic row;
  row.name = std::move(name);
  row.extents = {16, depth};
  row.reduces = {false, true};
  row.lhs = {lhs, {0, 1}};
  row.rhs = {rhs, {depth, 1}};
  row.out = {out, {1, 0}};
  row.required_features = {std::move(feature)};
  row.isa = "avx512";
  row.emit = [function](const std::string& l, const std::string& r, const std::string& o) {
    return fmt::format("ansor_rt::{}({}, {}, {});", function, l, r, o);
  };
  row.interpret = std::move(interpret);
  return row;
}

const std::array<TensorIntrinsic, 3>& rows() {
  static const std::array<TensorIntrinsic, 3> table = {
      dot_row("avx512bf16_dot2x16", DType::BF16, DType::BF16, DType::F32, 2, "avx512bf16", "dot_bf16x2_f32x16",
              [](const void* l, const void* r, void* o) { interpret_dot<uint16_t, uint16_t, float>(l, r, o, 2, bf16_value, bf16_value); }),
      dot_row("avx512vnni_dot4x16_u8s8", DType::U8, DType::I8, DType::I32, 4, "avx512vnni", "dot_u8s8x4_i32x16",
              [](const void* l, const void* r, void* o) {
                interpret_dot<uint8_t, int8_t, int32_t>(l, r, o, 4, int_value<uint8_t>, int_value<int8_t>);
              }),
      dot_row("avx512vnni_dot4x16_s8u8", DType::I8, DType::U8, DType::I32, 4, "avx512vnni", "dot_s8u8x4_i32x16",
              [](const void* l, const void* r, void* o) {
                interpret_dot<int8_t, uint8_t, int32_t>(l, r, o, 4, int_value<int8_t>, int_value<uint8_t>);
              }),
  };
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
