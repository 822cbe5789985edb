// Tests of the tensor-core products of cuda_support.h (mma_f16_f32, mma_bf16_f32, mma_tf32_f32
// and the mma.sync primitive under them) on the CPU emulation of CUDA: kernels compiled as C++ lay out
// each thread's rows and columns as the CUDA generator does, and their results are compared with
// a double-precision reference. The inputs are multiples of 1/64 up to 2 in magnitude and the
// accumulators' initial values multiples of 1/8, so every sum is exact in f32 and the results
// must equal the reference exactly.
#include "ansor/cuda_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

namespace {

using ansor_rt::MmaInput;

// The element type of an input kind's operands in memory, and the k of one product.
template <MmaInput Input>
using Element = std::conditional_t<Input == MmaInput::TF32, float, uint16_t>;
template <MmaInput Input>
constexpr int kDepth = Input == MmaInput::TF32 ? 8 : 16;

// Where a test's matrices are: A(r, k) = a[r * a_row + k * a_k], B(k, n) = b[k * b_k + n * b_column],
// and C, row-major with `columns` columns, starts as c_initial and ends in c.
template <class T>
struct Operands {
  const T* a;
  int a_row, a_k;
  const T* b;
  int b_k, b_column;
  const float* c_initial;
  float* c;
  int columns;
  int k_steps;
  int a_elements;  // A's storage, which a kernel loading it as matrices copies to shared memory
};

// Each warp computes 16 MI rows of C (warp w the rows from 16 MI w), all 8 NJ columns, over
// k_steps products of kDepth k. As in the generator's warp tiles, a thread's rows are contiguous
// pairs, g 2 MI + 2 mi + h, and its columns t 2 NJ + 2 nj + cc (g = lane / 4, t = lane % 4).
// LhsWords (RhsWords): A's (B's) pairs of k are loaded as words (k contiguous and aligned).
// RotatedA: A is row-major with its rows' chunks of 8 rotated by one every 2 rows
// (ansor_rt::RotatedRows), and the kernel passes it as such. LhsMatrices: A's fragments are
// loaded as 8 x 8 matrices (ldmatrix), from a copy of A in shared memory.
template <MmaInput Input, int MI, int NJ, bool LhsWords = false, bool RhsWords = false, int RotatedRow = 0, bool LhsMatrices = false>
__global__ void warp_tiles_kernel(Operands<Element<Input>> operands) {
  if constexpr (LhsMatrices) {
    ANSOR_DYNAMIC_SHARED_MEMORY(shared);
    auto* copy = reinterpret_cast<Element<Input>*>(shared);
    for (int i = static_cast<int>(threadIdx.x); i < operands.a_elements; i += static_cast<int>(blockDim.x)) copy[i] = operands.a[i];
    __syncthreads();
    operands.a = copy;
  }
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int first_row = warp * 16 * MI + lane / 4 * 2 * MI, first_column = lane % 4 * 2 * NJ;
  float accumulators[2 * MI][2 * NJ];
  for (int r = 0; r < 2 * MI; ++r)
    for (int n = 0; n < 2 * NJ; ++n) accumulators[r][n] = operands.c_initial[(first_row + r) * operands.columns + first_column + n];
  for (int step = 0; step < operands.k_steps; ++step) {
    const int a_offset = first_row * operands.a_row + step * kDepth<Input> * operands.a_k;
    const Element<Input>* b = operands.b + first_column * operands.b_column + step * kDepth<Input> * operands.b_k;
    const int a_k = operands.a_k, a_mi = 2 * operands.a_row, a_h = operands.a_row;
    const int b_k = operands.b_k, b_nj = 2 * operands.b_column, b_c = operands.b_column, b_t = 2 * NJ * operands.b_column;
    auto multiply = [&](auto a) {
      if constexpr (Input == MmaInput::F16)
        ansor_rt::mma_f16_f32<MI, NJ, LhsWords, RhsWords, LhsMatrices>(a, a_k, a_mi, a_h, b, b_k, b_nj, b_c, b_t, &accumulators[0][0], 4 * NJ,
                                                                       2 * NJ, 2, 1);
      else if constexpr (Input == MmaInput::BF16)
        ansor_rt::mma_bf16_f32<MI, NJ, LhsWords, RhsWords, LhsMatrices>(a, a_k, a_mi, a_h, b, b_k, b_nj, b_c, b_t, &accumulators[0][0], 4 * NJ,
                                                                        2 * NJ, 2, 1);
      else
        ansor_rt::mma_tf32_f32<MI, NJ>(a, a_k, a_mi, a_h, b, b_k, b_nj, b_c, b_t, &accumulators[0][0], 4 * NJ, 2 * NJ, 2, 1);
    };
    if constexpr (RotatedRow > 0)
      multiply(ansor_rt::rotated_rows<RotatedRow, 8, 2>(operands.a, a_offset));
    else
      multiply(operands.a + a_offset);
  }
  for (int r = 0; r < 2 * MI; ++r)
    for (int n = 0; n < 2 * NJ; ++n) operands.c[(first_row + r) * operands.columns + first_column + n] = accumulators[r][n];
}

// One m16n8k16 product through the primitive, its fragments built here from row-major A (16 x 16),
// B (16 x 8) and C (16 x 8) by the PTX ISA's table. Lane `miswired_lane` (-1: none) swaps the two
// halves of its a0, as a layout with the wrong k order would.
__global__ void single_mma_kernel(const uint16_t* a, const uint16_t* b, float* c, int miswired_lane) {
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
  const auto pair = [](uint16_t low, uint16_t high) { return static_cast<uint32_t>(low) | static_cast<uint32_t>(high) << 16; };
  uint32_t a_fragment[4] = {pair(a[g * 16 + 2 * t], a[g * 16 + 2 * t + 1]), pair(a[(g + 8) * 16 + 2 * t], a[(g + 8) * 16 + 2 * t + 1]),
                            pair(a[g * 16 + 2 * t + 8], a[g * 16 + 2 * t + 9]),
                            pair(a[(g + 8) * 16 + 2 * t + 8], a[(g + 8) * 16 + 2 * t + 9])};
  if (lane == miswired_lane) a_fragment[0] = a_fragment[0] >> 16 | a_fragment[0] << 16;
  const uint32_t b_fragment[2] = {pair(b[2 * t * 8 + g], b[(2 * t + 1) * 8 + g]), pair(b[(2 * t + 8) * 8 + g], b[(2 * t + 9) * 8 + g])};
  float c_fragment[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  ansor_rt::mma_sync<MmaInput::F16>(a_fragment, b_fragment, c_fragment);
  c[g * 8 + 2 * t] = c_fragment[0];
  c[g * 8 + 2 * t + 1] = c_fragment[1];
  c[(g + 8) * 8 + 2 * t] = c_fragment[2];
  c[(g + 8) * 8 + 2 * t + 1] = c_fragment[3];
}

// `count` multiples of 1/64 in [-2, 2): runs of 256 distinct values, each a fresh shuffle, so
// that the elements a wrong fragment layout would exchange almost never hold equal values.
std::vector<float> distinct_inputs(size_t count, std::mt19937& random) {
  std::vector<int> levels(256);
  std::iota(levels.begin(), levels.end(), -128);
  std::vector<float> values;
  while (values.size() < count) {
    std::shuffle(levels.begin(), levels.end(), random);
    for (size_t i = 0; i < levels.size() && values.size() < count; ++i) values.push_back(static_cast<float>(levels[i]) / 64.0f);
  }
  return values;
}

// `count` multiples of 1/8 in [-8, 8], none zero, so that the products add to what was there.
std::vector<float> initial_accumulators(size_t count, std::mt19937& random) {
  std::uniform_int_distribution<int> eighths(1, 64);
  std::bernoulli_distribution negative;
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(negative(random) ? -eighths(random) : eighths(random)) / 8.0f;
  return values;
}

template <MmaInput Input>
uint16_t narrow(float value) {
  return Input == MmaInput::F16 ? ansor_rt::f32_to_f16(value) : ansor_rt::f32_to_bf16(value);
}

// C + A B in double for row-major A (rows x depth), B (depth x columns) and C.
std::vector<double> reference_product(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int rows, int depth,
                                      int columns) {
  std::vector<double> d(c.begin(), c.end());
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < columns; ++n)
      for (int k = 0; k < depth; ++k) d[r * columns + n] += static_cast<double>(a[r * depth + k]) * b[k * columns + n];
  return d;
}

// How many of `actual` differ from `expected`, each reported when `report` is set.
size_t mismatches(const std::vector<float>& actual, const std::vector<double>& expected, int columns, bool report) {
  size_t count = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    ++count;
    if (report) ADD_FAILURE() << "C(" << i / columns << ", " << i % columns << ") = " << actual[i] << ", expected " << expected[i];
  }
  return count;
}

enum class Major { Row, Column };

struct Shape {
  int warps;
  int k_steps;
  Major a;
  Major b;
};

// Runs warp_tiles_kernel on random operands of `shape` and compares C with the reference.
template <MmaInput Input, int MI, int NJ, bool LhsWords = false, bool RhsWords = false, int RotatedRow = 0, bool LhsMatrices = false>
void check_warp_tiles(const Shape& shape) {
  const int rows = shape.warps * 16 * MI, columns = 8 * NJ, depth = 16 * shape.k_steps;
  std::mt19937 random(rows * 1000 + columns * 10 + depth);
  const std::vector<float> a = distinct_inputs(static_cast<size_t>(rows) * depth, random);
  const std::vector<float> b = distinct_inputs(static_cast<size_t>(depth) * columns, random);
  const std::vector<float> c_initial = initial_accumulators(static_cast<size_t>(rows) * columns, random);

  const bool a_by_columns = shape.a == Major::Column, b_by_columns = shape.b == Major::Column;
  const int a_row = a_by_columns ? 1 : depth, a_k = a_by_columns ? rows : 1;
  const int b_k = b_by_columns ? 1 : columns, b_column = b_by_columns ? depth : 1;
  std::vector<uint16_t> a_stored(a.size()), b_stored(b.size());
  const auto a_at = [&](int offset) {
    if (RotatedRow == 0) return offset;
    const int row = offset / RotatedRow, column = offset % RotatedRow;
    return row * RotatedRow + ((column / 8 + row / 2) % (RotatedRow / 8)) * 8 + column % 8;
  };
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < depth; ++k) a_stored[a_at(r * a_row + k * a_k)] = narrow<Input>(a[r * depth + k]);
  for (int k = 0; k < depth; ++k)
    for (int n = 0; n < columns; ++n) b_stored[k * b_k + n * b_column] = narrow<Input>(b[k * columns + n]);

  std::vector<float> c(c_initial.size());
  const Operands<uint16_t> operands{a_stored.data(), a_row, a_k, b_stored.data(), b_k, b_column, c_initial.data(), c.data(), columns, shape.k_steps,
                                    static_cast<int>(a_stored.size())};
  const size_t shared_bytes = LhsMatrices ? a_stored.size() * sizeof(uint16_t) : 0;
  ASSERT_EQ(ansor_cuda_emulation::launch(warp_tiles_kernel<Input, MI, NJ, LhsWords, RhsWords, RotatedRow, LhsMatrices>, dim3(1),
                                         dim3(32 * shape.warps), shared_bytes, nullptr, operands),
            cudaSuccess);
  EXPECT_EQ(mismatches(c, reference_product(a, b, c_initial, rows, depth, columns), columns, true), 0u);
}

TEST(Mma, F16OneWarpOneTile) { check_warp_tiles<MmaInput::F16, 1, 1>({1, 1, Major::Row, Major::Row}); }

TEST(Mma, F16TwoWarpsOfTwoByFourTilesOverThreeKSteps) { check_warp_tiles<MmaInput::F16, 2, 4>({2, 3, Major::Row, Major::Row}); }

TEST(Mma, F16ColumnMajorOperands) { check_warp_tiles<MmaInput::F16, 2, 4>({2, 3, Major::Column, Major::Column}); }

TEST(Mma, F16RowMajorAColumnMajorB) { check_warp_tiles<MmaInput::F16, 1, 2>({1, 2, Major::Row, Major::Column}); }

// Contiguous k in both operands (A by rows, B by columns, every pair at an even element of an
// aligned array): each register is one word.
TEST(Mma, F16PairsOfKLoadedAsWords) { check_warp_tiles<MmaInput::F16, 2, 4, true, true>({2, 3, Major::Row, Major::Column}); }

// A's rows (48 halves: 3 k steps) stored with their chunks rotated, read through RotatedRows,
// by halves and by words.
TEST(Mma, F16RotatedRowsOfA) { check_warp_tiles<MmaInput::F16, 4, 2, false, false, 48>({2, 3, Major::Row, Major::Row}); }

TEST(Mma, F16RotatedRowsOfALoadedAsWords) { check_warp_tiles<MmaInput::F16, 2, 4, true, false, 48>({1, 3, Major::Row, Major::Row}); }

// A's fragments as four 8 x 8 matrices per tile (ldmatrix.x4): each lane addresses a row of
// another lane group's, k 0-7 or 8-15, rotated or not.
TEST(Mma, F16ALoadedAsMatrices) { check_warp_tiles<MmaInput::F16, 2, 4, true, true, 0, true>({2, 3, Major::Row, Major::Column}); }

TEST(Mma, F16RotatedRowsOfALoadedAsMatrices) { check_warp_tiles<MmaInput::F16, 4, 2, true, false, 48, true>({2, 3, Major::Row, Major::Row}); }

TEST(Mma, BF16ALoadedAsMatrices) { check_warp_tiles<MmaInput::BF16, 1, 2, true, false, 0, true>({1, 2, Major::Row, Major::Row}); }

TEST(Mma, BF16PairsOfKInALoadedAsWords) { check_warp_tiles<MmaInput::BF16, 4, 2, true, false>({1, 2, Major::Row, Major::Row}); }

TEST(Mma, BF16OneWarpOneTile) { check_warp_tiles<MmaInput::BF16, 1, 1>({1, 1, Major::Row, Major::Row}); }

TEST(Mma, BF16TwoWarpsOfTwoByFourTilesOverThreeKSteps) { check_warp_tiles<MmaInput::BF16, 2, 4>({2, 3, Major::Row, Major::Row}); }

TEST(Mma, BF16ColumnMajorAOverTwoKSteps) { check_warp_tiles<MmaInput::BF16, 2, 1>({1, 2, Major::Column, Major::Row}); }

// TF32 tiles on row-major A (k contiguous) and column-major B (k contiguous), with `extra_bits`
// below TF32's precision added to every operand: the product is that of the rounded operands.
template <int MI, int NJ>
void check_tf32_warp_tiles(int warps, int k_steps, float extra_bits) {
  const int rows = warps * 16 * MI, columns = 8 * NJ, depth = 8 * k_steps;
  std::mt19937 random(rows * 1000 + columns * 10 + depth);
  std::vector<float> a = distinct_inputs(static_cast<size_t>(rows) * depth, random);
  std::vector<float> b = distinct_inputs(static_cast<size_t>(depth) * columns, random);
  const std::vector<float> c_initial = initial_accumulators(static_cast<size_t>(rows) * columns, random);
  std::vector<float> a_stored(a.size()), b_stored(b.size());
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < depth; ++k) a_stored[r * depth + k] = a[r * depth + k] * (1 + extra_bits);
  for (int k = 0; k < depth; ++k)
    for (int n = 0; n < columns; ++n) b_stored[n * depth + k] = b[k * columns + n] * (1 + extra_bits);
  std::vector<float> c(c_initial.size());
  const Operands<float> operands{a_stored.data(), depth, 1, b_stored.data(), 1, depth, c_initial.data(), c.data(), columns, k_steps,
                                 static_cast<int>(a_stored.size())};
  ASSERT_EQ(ansor_cuda_emulation::launch(warp_tiles_kernel<MmaInput::TF32, MI, NJ>, dim3(1), dim3(32 * warps), 0, nullptr, operands),
            cudaSuccess);
  EXPECT_EQ(mismatches(c, reference_product(a, b, c_initial, rows, depth, columns), columns, true), 0u);
}

TEST(Mma, Tf32OneWarpOneTile) { check_tf32_warp_tiles<1, 1>(1, 1, 0); }

TEST(Mma, Tf32TwoWarpsOfTwoByFourTilesOverThreeKSteps) { check_tf32_warp_tiles<2, 4>(2, 3, 0); }

// 2^-14 relative: below half a unit of TF32's 10 mantissa bits for every input (multiples of
// 1/64 with at most 8 significant bits), so rounding recovers the exact inputs.
TEST(Mma, Tf32OperandsAreRoundedToTf32) { check_tf32_warp_tiles<2, 2>(1, 2, 0x1p-14f); }

// The primitive alone, with fragments laid out by the test (`miswired_lane` as in
// single_mma_kernel): C after the product and the reference.
std::pair<std::vector<float>, std::vector<double>> single_mma(int miswired_lane) {
  std::mt19937 random(7);
  const std::vector<float> a = distinct_inputs(16 * 16, random), b = distinct_inputs(16 * 8, random);
  const std::vector<float> c_initial = initial_accumulators(16 * 8, random);
  std::vector<uint16_t> a_stored(a.size()), b_stored(b.size());
  std::transform(a.begin(), a.end(), a_stored.begin(), narrow<MmaInput::F16>);
  std::transform(b.begin(), b.end(), b_stored.begin(), narrow<MmaInput::F16>);
  std::vector<float> c = c_initial;
  EXPECT_EQ(ansor_cuda_emulation::launch(single_mma_kernel, dim3(1), dim3(32), 0, nullptr, a_stored.data(), b_stored.data(), c.data(), miswired_lane),
            cudaSuccess);
  return {c, reference_product(a, b, c_initial, 16, 16, 8)};
}

TEST(Mma, PrimitiveFollowsThePtxFragmentLayout) {
  const auto [c, expected] = single_mma(-1);
  EXPECT_EQ(mismatches(c, expected, 8, true), 0u);
}

// The comparison catches a layout wrong in one half-register of one lane: row g = 2 of the
// result, which lane 9's a0 feeds, differs, and no other row.
TEST(Mma, OneMiswiredLaneIsCaught) {
  const auto [c, expected] = single_mma(9);
  for (int r = 0; r < 16; ++r) {
    const std::vector<float> row(c.begin() + r * 8, c.begin() + (r + 1) * 8);
    const std::vector<double> expected_row(expected.begin() + r * 8, expected.begin() + (r + 1) * 8);
    if (r == 2)
      EXPECT_GT(mismatches(row, expected_row, 8, false), 0u);
    else
      EXPECT_EQ(mismatches(row, expected_row, 8, true), 0u) << "row " << r;
  }
}

}  // namespace
