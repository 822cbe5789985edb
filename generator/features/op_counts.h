// The arithmetic one execution of a buffer store performs, by kind: the computation group of the
// cost model's features (features.h) before the loops multiply it.
#pragma once

#include <array>

#include "lower/stmt.h"

namespace ansor {

enum class ArithKind : uint8_t { Mad, AddSub, Mul, DivMod, Cmp, MathFunc, OtherFunc };
inline constexpr int kNumArithKinds = 7;

struct OpCounts {
  std::array<double, kNumArithKinds> float_ops{};  // by ArithKind, on floating-point operands
  std::array<double, kNumArithKinds> int_ops{};    // by ArithKind, on integer (and bool) operands
  double bool_ops = 0;                          // &&, ||, !
  double select_ops = 0;

  // Arithmetic of one class counted as operations (a multiply-add is two), for the arithmetic
  // intensity curve.
  double float_flops() const;
  double int_flops() const;
};

// Counts the operations of the store's value and of every index it evaluates (its loads' and
// its own). An add or subtract with a multiply as operand counts as one multiply-add (the
// multiply is not counted again); min, max and comparisons are comparisons; math functions are
// math functions; casts are the "other" functions of the class they convert to.
OpCounts count_ops(const StoreNode& store);

}  // namespace ansor
