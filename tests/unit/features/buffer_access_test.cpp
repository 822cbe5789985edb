// The accesses of one store, the regions its loops sweep, strides and contiguous runs.
#include "features/buffer_access.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ansor {
namespace {

class BufferAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_.name = "k";
    kernel_.buffers = {test::buffer("A", {8, 16}), test::buffer("C", {8})};
  }

  std::vector<BufferAccess> accesses_of(const Stmt& store) { return store_accesses(kernel_, *store->as<StoreNode>()); }

  LoweredKernel kernel_;
  Var i = make_var("i"), j = make_var("j");
};

TEST_F(BufferAccessTest, TheStoredBufferFirstThenReadsInOrderWithDistinctTuples) {
  // C[i] = C[i] + A[i, j] + A[i, j] + A[i, j + 1]
  Expr a = load("A", DType::F32, {i, j});
  Stmt s = make_store("C", {i}, add(add(add(load("C", DType::F32, {i}), a), a), load("A", DType::F32, {i, add(j, int_imm(1))})));
  std::vector<BufferAccess> acc = accesses_of(s);
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].buffer->name, "C");
  EXPECT_EQ(acc[0].type, AccessType::ReadWrite);
  EXPECT_EQ(acc[0].indices.size(), 1u);
  EXPECT_EQ(acc[1].buffer->name, "A");
  EXPECT_EQ(acc[1].buffer_index, 0);
  EXPECT_EQ(acc[1].type, AccessType::Read);
  EXPECT_EQ(acc[1].indices.size(), 2u);
  EXPECT_TRUE(acc[1].uses(j.get()));
  EXPECT_FALSE(acc[0].uses(j.get()));
}

TEST_F(BufferAccessTest, RegionsWidenOneLoopPerLevelAndStayInsideTheBuffer) {
  // for i < 10, j < 4: C[i] = A[i - 1, 4*j + 1]
  Stmt body = make_store("C", {i}, load("A", DType::F32, {sub(i, int_imm(1)), add(mul(j, int_imm(4)), int_imm(1))}));
  Stmt inner = make_for(j, 4, ForKind::Serial, body), outer = make_for(i, 10, ForKind::Serial, inner);
  std::vector<const ForNode*> loops = {outer->as<ForNode>(), inner->as<ForNode>()};
  TouchedRegions r = touched_regions(accesses_of(body), loops);
  ASSERT_EQ(r.elements.size(), 3u);
  // One execution: one element each; j runs: C 1, A 13 (columns 1..13 of row -1); both: C 10
  // and A rows -1..8, no more than the 8 of the buffers.
  EXPECT_EQ(r.elements[2], (std::vector<double>{1, 1}));
  EXPECT_EQ(r.elements[1], (std::vector<double>{1, 13}));
  EXPECT_EQ(r.elements[0], (std::vector<double>{8, 8 * 13}));
  EXPECT_EQ(r.outermost[1], (std::vector<int64_t>{8, 13}));
}

TEST_F(BufferAccessTest, StridesAreCoefficientsOrAverageSteps) {
  Var v = make_var("v");
  auto stride_of = [&](std::vector<std::vector<Expr>> tuples, int64_t extent) {
    BufferAccess a;
    a.buffer = &kernel_.buffers[0];
    for (auto& t : tuples) {
      a.indices.push_back(t);
      a.flat.push_back(flat_index(*a.buffer, t));
      a.flat_forms.push_back(linearize(a.flat.back()));
    }
    Stmt loop = make_for(v, extent, ForKind::Serial, make_store("C", {int_imm(0)}, float_imm(0)));
    return loop_stride(a, *loop->as<ForNode>(), {loop->as<ForNode>()});
  };
  EXPECT_EQ(stride_of({{v, int_imm(0)}}, 8), 16);
  EXPECT_EQ(stride_of({{int_imm(0), mul(v, int_imm(3))}}, 4), 3);
  EXPECT_EQ(stride_of({{int_imm(0), int_imm(1)}}, 4), 0) << "the loop does not move it";
  // The least over the tuples that move: 2 rather than 4.
  EXPECT_EQ(stride_of({{int_imm(0), mul(v, int_imm(4))}, {int_imm(1), mul(v, int_imm(2))}}, 4), 2);
  // Not linear: v / 2 for v < 8 moves 3 columns in 7 steps: 1 per step, rounded up; v % 4 * 5 for
  // v < 4 is 15 columns in 3 steps.
  EXPECT_EQ(stride_of({{int_imm(0), div(v, int_imm(2))}}, 8), 1);
  EXPECT_EQ(stride_of({{int_imm(0), mul(mod(v, int_imm(4)), int_imm(5))}}, 4), 5);
}

TEST(ContiguousRunTest, InnerDimensionsJoinWhileWholeAndUnpadded) {
  Buffer b = test::buffer("T", {4, 8, 16});
  EXPECT_EQ(contiguous_elements(b, {2, 8, 16}), 256);
  EXPECT_EQ(contiguous_elements(b, {2, 4, 16}), 64);
  EXPECT_EQ(contiguous_elements(b, {2, 8, 4}), 4);
  Buffer padded = b;
  padded.strides = {8 * 17, 17, 1};  // storage_align pads rows to 17
  EXPECT_EQ(contiguous_elements(padded, {2, 8, 16}), 16);
  EXPECT_EQ(contiguous_elements(test::buffer("S", {}), {}), 1);
  // A local buffer laid out in its loops' order: the first dimension contiguous.
  Buffer columns = test::buffer("L", {16, 2});
  columns.strides = {1, 16};
  EXPECT_EQ(contiguous_elements(columns, {16, 2}), 32);
  EXPECT_EQ(contiguous_elements(columns, {8, 2}), 8);
}

}  // namespace
}  // namespace ansor
