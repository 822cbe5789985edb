// The layout of shared buffers against bank conflicts (lower/shared_layout.h): a tile read down
// its columns gets the padding that spreads a column over the banks, within the alignment of the
// vector copies and unrolled runs along its rows; a layout the schedule chose, and a launch the
// padding would take beyond the GPU's shared memory, stay as they are; rotated rows keep each
// row's chunks whole; tensor-core fragments read their shared copies in fewer passes (the
// default tile's A through rotated rows), lhs pairs of k as words; and the programs compute what
// the naive program computes.
#include <gtest/gtest.h>

#include <set>

#include "codegen/cuda_codegen.h"
#include "codegen/kernel_signature.h"
#include "ir/arith.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "lower/shared_layout.h"
#include "lower/stmt_printer.h"
#include "sampler/annotation.h"
#include "sampler/default_schedule.h"
#include "schedule/steps.h"
#include "test_support.h"
#include "warp_rows.h"

namespace ansor {
namespace {

LoweredKernel lower_for(const State& s) {
  LowerOptions options;
  options.target = test::sm80();
  return lower_state(s, "k", options);
}

std::shared_ptr<const ComputeDAG> transpose_dag(int64_t rows) {
  return test::dag_of(test::parse(fmt::format("kernel t {{ A = input f32[{0}, 32]\n C[i:32, j:{0}] = A[j, i] }}", rows)), "t");
}

// C = A transposed, in blocks of 32 columns of C: A's 32-row slice is copied into shared memory
// (its rows by the block's threads, `vector` floats per vector copy where given) and each thread
// j walks along its row of the copy (a serial loop, read element by element), so that at each
// step the warp reads a column of it.
State column_reads(const std::shared_ptr<const ComputeDAG>& dag, int64_t vector = 0) {
  State s(dag);
  s.apply(std::make_shared<CacheReadStep>(0, MemoryScope::Shared, std::vector<int>{1}));  // A.shared: 1, C: 2
  const int c = 2;
  s.apply(std::make_shared<SplitStep>(c, 1, std::vector<int64_t>{32}));         // i j.0 j.1
  s.apply(std::make_shared<ReorderStep>(c, std::vector<int>{1, 2, 0}));      // j.0 j.1 i
  s.apply(std::make_shared<AnnotateStep>(c, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<AnnotateStep>(c, 1, IterAnnotation::ThreadX));
  s.apply(std::make_shared<ComputeAtStep>(1, c, 0));
  if (vector > 0) s.apply(std::make_shared<SplitStep>(1, 1, std::vector<int64_t>{vector}));  // ax0 ax1.0 ax1.1
  s.apply(std::make_shared<FuseStep>(1, std::vector<int>{0, 1}));
  s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{32}));
  s.apply(std::make_shared<AnnotateStep>(1, 1, IterAnnotation::ThreadX));
  if (vector > 0) s.apply(std::make_shared<AnnotateStep>(1, 2, IterAnnotation::Vectorize));
  return s;
}

const Buffer& buffer(const LoweredKernel& k, const std::string& name) {
  const Buffer* b = k.find_buffer(name);
  EXPECT_NE(b, nullptr) << name;
  return *b;
}

// The bank passes of `name` in the kernel's decisions with the buffer's rows neither padded nor
// rotated.
int64_t passes_unpadded(LoweredKernel k, const std::string& name) {
  for (Buffer& b : k.buffers)
    if (b.name == name) b.strides = row_major_strides(b.shape), b.rotation = {};
  return shared_bank_passes(k, name);
}

// A rotation moves each row's chunks within the row, whole: every row holds its own elements,
// each once, and a chunk's elements stay consecutive; the expression lowering prints computes the
// same offsets.
TEST(SharedLayoutTest, RotatedRowsKeepEachRowsChunksWhole) {
  const RowRotation rotation{64, 8, 2};
  const Var offset = make_var("o");
  const Expr printed = rotation.rotated_offset(Expr(offset));
  for (int64_t row = 0; row < 20; ++row) {
    std::set<int64_t> stored;
    for (int64_t column = 0; column < 64; ++column) {
      const int64_t logical = row * 64 + column, at = rotation.rotated_offset(logical);
      EXPECT_EQ(at / 64, row);
      EXPECT_EQ(at % 8, column % 8);
      EXPECT_EQ(at / 8 % 8, (column / 8 + row / 2) % 8);
      stored.insert(at);
      const Expr folded = simplify(substitute(printed, {{offset.get(), int_imm(logical)}}));
      ASSERT_TRUE(is_const_int(folded, at)) << to_string(folded);
    }
    EXPECT_EQ(stored.size(), 64u);
  }
}

TEST(SharedLayoutTest, AColumnReadTileIsPaddedByOneElementPerRow) {
  const auto dag = transpose_dag(64);
  const LoweredKernel k = lower_for(column_reads(dag));
  EXPECT_EQ(buffer(k, "A.shared").strides, (std::vector<int64_t>{33, 1})) << to_string(k);
  // Unpadded, each of the 32 column reads takes 32 passes; the 32 row stores take one each.
  // Padded, every access takes one pass.
  EXPECT_EQ(passes_unpadded(k, "A.shared"), 32 * 32 + 32);
  EXPECT_EQ(shared_bank_passes(k, "A.shared"), 32 + 32);
  EXPECT_EQ(k.launches.at(0).shared_bytes, 32 * 33 * 4);
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k));
}

TEST(SharedLayoutTest, PaddingKeepsTheVectorCopiesAligned) {
  const auto dag = transpose_dag(64);
  const LoweredKernel k = lower_for(column_reads(dag, 4));
  // Rows stay a multiple of 4 floats: of those paddings, 4 spreads a column over 8 banks (4
  // passes a read) where the 16-byte copies (8 per thread) still take one pass per quarter warp.
  EXPECT_EQ(buffer(k, "A.shared").strides, (std::vector<int64_t>{36, 1})) << to_string(k);
  EXPECT_EQ(k.vector_copies.size(), 1u) << "the copy stays a vector copy\n" << to_string(k);
  EXPECT_EQ(shared_bank_passes(k, "A.shared"), 32 * 4 + 8 * 4);
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k));
}

TEST(SharedLayoutTest, PaddingKeepsTheRunsOfUnrolledReadsAligned) {
  // Each thread reads 4 consecutive floats of its row in an unrolled loop (written out as 4
  // statements), which the compiler may make one 16-byte load: rows stay a multiple of 4 floats.
  const auto dag = transpose_dag(64);
  State s = column_reads(dag);
  s.apply(std::make_shared<SplitStep>(2, 2, std::vector<int64_t>{4}));  // j.0 j.1 i.0 i.1
  s.apply(std::make_shared<AnnotateStep>(2, 3, IterAnnotation::Unroll));
  const LoweredKernel k = lower_for(s);
  EXPECT_EQ(buffer(k, "A.shared").strides, (std::vector<int64_t>{36, 1})) << to_string(k);
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k));
}

TEST(SharedLayoutTest, ALayoutTheScheduleAlignsStaysAsItIs) {
  const auto dag = transpose_dag(64);
  State s = column_reads(dag);
  s.apply(std::make_shared<StorageAlignStep>(1, 0, 32, 2));
  const LoweredKernel k = lower_for(s);
  EXPECT_EQ(buffer(k, "A.shared").strides, (std::vector<int64_t>{34, 1}));
}

TEST(SharedLayoutTest, NoPaddingTakesALaunchBeyondTheSharedMemory) {
  // As many rows of 32 floats as fit the GPU's shared memory unpadded, and not padded by one.
  const int64_t rows = test::sm80().gpu.max_shared_bytes_per_block / (32 * 4) / 32 * 32;
  ASSERT_GT(rows * 33 * 4, test::sm80().gpu.max_shared_bytes_per_block);
  const auto dag = transpose_dag(rows);
  State s(dag);
  s.apply(std::make_shared<CacheReadStep>(0, MemoryScope::Shared, std::vector<int>{1}));
  s.apply(std::make_shared<SplitStep>(2, 1, std::vector<int64_t>{rows}));
  s.apply(std::make_shared<ReorderStep>(2, std::vector<int>{1, 2, 0}));
  s.apply(std::make_shared<AnnotateStep>(2, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<SplitStep>(2, 1, std::vector<int64_t>{32}));
  s.apply(std::make_shared<AnnotateStep>(2, 2, IterAnnotation::ThreadX));
  s.apply(std::make_shared<ComputeAtStep>(1, 2, 0));
  s.apply(std::make_shared<FuseStep>(1, std::vector<int>{0, 1}));
  s.apply(std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{32}));
  s.apply(std::make_shared<AnnotateStep>(1, 1, IterAnnotation::ThreadX));
  const LoweredKernel k = lower_for(s);
  EXPECT_EQ(buffer(k, "A.shared").strides, (std::vector<int64_t>{32, 1})) << to_string(k);
  EXPECT_LE(k.launches.at(0).shared_bytes, test::sm80().gpu.max_shared_bytes_per_block);
}

// An f16 product summed in f32, on tensor cores.
std::shared_ptr<const ComputeDAG> f16_matmul() {
  return test::dag_of(test::parse(R"(
kernel m {
  A = input f16[128, 128]
  B = input f16[128, 64]
  S[i:128, j:64] = sum(k:128, f32(A[i, k]) * f32(B[k, j]))
  C[i:128, j:64] = f16(S[i, j])
})"),
                      "m");
}

// The default f16 warp tile (4 x 4 instruction tiles a warp, 16-byte fetches): its A fragments
// are 8 x 8 matrices (ldmatrix.x4) whose 8 rows are lane groups' rows, 8 apart, a multiple of
// 128 bytes whatever the padding, so A's rows are rotated (a chunk stays 16 bytes, a matrix row),
// and its fragment loads take a fraction of the passes; the program computes the naive result.
TEST(SharedLayoutTest, TheDefaultTensorCoreTileRotatesTheRowsOfA) {
  const auto dag = f16_matmul();
  const LoweredKernel k = lower_for(default_schedule(dag, test::gpu_context_with_warp_rows(test::sm80())));
  ASSERT_FALSE(k.tensor_calls.empty());
  for (const auto& [loop, call] : k.tensor_calls) EXPECT_TRUE(call.shape.lhs_matrices);
  const Buffer& a = buffer(k, "A.shared");
  EXPECT_TRUE(a.rotation.rotates()) << to_string(k);
  EXPECT_EQ(a.strides, row_major_strides(a.shape)) << "rotated, not padded";
  LoweredKernel unrotated = k;
  for (Buffer& b : unrotated.buffers) b.rotation = {};
  EXPECT_LE(shared_bank_passes(k, "A.shared") * 4, shared_bank_passes(unrotated, "A.shared"));
  const std::string text = emit_cuda_kernel(k, kernel_params(*dag), "k");
  EXPECT_NE(text.find("ansor_rt::mma_f16_f32<4, 4, true, false, true>(ansor_rt::rotated_rows<"), std::string::npos) << text;
  EXPECT_TRUE(test::computes_like(lower_state(State(dag), "naive"), k));
}

// Warp tiles of tensor cores: the fragments' rows are 2 MI rows apart in the copy of A, and a
// row of B's copy is a multiple of 128 bytes for the tiles the sampler takes, so unpadded copies
// put lanes on one bank. Every sampled program's copies are read in no more passes than
// unpadded (fewer in most), A's pairs of k are loaded as words, and the result is the naive one.
TEST(SharedLayoutTest, TensorCoreFragmentsReadPaddedCopiesInFewerPasses) {
  const auto dag = f16_matmul();
  const SamplerContext ctx = test::gpu_context_with_warp_rows(test::sm80());
  const LoweredKernel naive = lower_state(State(dag), "naive");
  const uint64_t seeds = test::kSanitizedBuild ? 3 : 8;
  int fewer = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const LoweredKernel k = lower_for(random_program(dag, ctx, seed));
    ASSERT_FALSE(k.tensor_calls.empty()) << "seed " << seed;
    for (const auto& [loop, call] : k.tensor_calls) {
      EXPECT_TRUE(call.shape.lhs_word_pairs) << "seed " << seed;
      EXPECT_FALSE(call.shape.rhs_word_pairs) << "B's pairs of k are in two rows";
    }
    for (const std::string name : {"A.shared", "B.shared"}) {
      const int64_t padded = shared_bank_passes(k, name), unpadded = passes_unpadded(k, name);
      EXPECT_LE(padded, unpadded) << name << " seed " << seed;
      fewer += padded < unpadded;
    }
    EXPECT_NE(emit_cuda_kernel(k, kernel_params(*dag), "k").find("mma_f16_f32<"), std::string::npos);
    EXPECT_TRUE(test::computes_like(naive, k)) << "seed " << seed;
  }
  EXPECT_GE(fewer, static_cast<int>(seeds)) << "of " << 2 * seeds << " copies";
}

}  // namespace
}  // namespace ansor
