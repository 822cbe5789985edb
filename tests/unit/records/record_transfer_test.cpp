// Records of the same computation at other shapes, mapped onto a kernel's DAG: which records
// count, in which order, and from which target.
#include "records/record_transfer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const ComputeDAG> matmul(int m, int n, int k) {
  return test::dag_of(test::parse(fmt::format("kernel k {{ A = input f32[{0}, {2}]\n B = input f32[{2}, {1}]\n C = matmul(A, B) }}", m, n, k)), "k");
}

// A record of `dag` whose schedule splits the rows by `rows`.
Record split_record(const ComputeDAG& dag, int64_t rows, double seconds, const std::string& target = test::kRecordTarget) {
  return test::make_record(dag, target, test::kRecordCompiler, seconds, {std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{rows})});
}

int64_t rows_of(const TransferredRecord& t) { return std::dynamic_pointer_cast<const SplitStep>(t.state.steps().at(0))->lengths.at(0); }

class RecordTransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::test_temp_dir("ansor_record_transfer_test");
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(RecordTransferTest, ClosestShapesFirstEachGivingItsFastestInTurn) {
  auto own = matmul(32, 32, 32);
  auto near = matmul(32, 64, 32);
  auto far = matmul(256, 256, 256);
  TuningCache cache(dir_.string());
  cache.append(split_record(*far, 16, 1e-3));  // far: eight times the extents
  cache.append(split_record(*near, 4, 2e-6));
  cache.append(split_record(*near, 8, 1e-6));
  cache.append(split_record(*far, 2, 2e-3));
  Record failed = split_record(*near, 2, 1e-7);
  failed.error = MeasureError::RunError;
  cache.append(failed);
  cache.append(split_record(*own, 1, 1e-6));  // the kernel's own: not a transfer
  auto relu = test::dag_of(test::parse("kernel k { A = input f32[32, 32]\n B = input f32[32, 64]\n C = relu(matmul(A, B)) }"), "k");
  cache.append(split_record(*relu, 32, 1e-7));  // another computation
  std::vector<TransferredRecord> found = transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 8);
  ASSERT_EQ(found.size(), 4u);
  // near's best, far's best (16 adapted to 32 rows: kept), near's second, far's second.
  EXPECT_EQ(rows_of(found[0]), 8);
  EXPECT_EQ(rows_of(found[1]), 16);
  EXPECT_EQ(rows_of(found[2]), 4);
  EXPECT_EQ(rows_of(found[3]), 2);
  EXPECT_EQ(found[0].record.workload_key, near->workload_key());
  EXPECT_NEAR(found[0].gflops, near->flop_count() / 1e-6 / 1e9, 1e-6);
  for (const TransferredRecord& t : found) EXPECT_EQ(t.state.dag().workload_key(), own->workload_key());
  EXPECT_EQ(transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 1).size(), 1u);
}

TEST_F(RecordTransferTest, SchedulesThatMapToTheSameOneCountOnce) {
  auto own = matmul(8, 8, 8);
  auto other = matmul(64, 64, 64);
  TuningCache cache(dir_.string());
  // Both split lengths shrink to 8 on 8 rows.
  cache.append(split_record(*other, 16, 1e-6));
  cache.append(split_record(*other, 32, 2e-6));
  EXPECT_EQ(transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 8).size(), 1u);
}

TEST_F(RecordTransferTest, ARecordWhoseLengthsDoNotDivideGivesBothFits) {
  auto own = matmul(24, 8, 8);
  auto other = matmul(64, 8, 8);
  TuningCache cache(dir_.string());
  cache.append(split_record(*other, 16, 1e-6));
  std::vector<TransferredRecord> found = transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 8);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(rows_of(found[0]), 12);  // the divisor of 24 nearest to 16
  EXPECT_EQ(rows_of(found[1]), 16);  // ragged: 2 x 16 cover 24
  EXPECT_EQ(transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 1).size(), 1u);
}

TEST_F(RecordTransferTest, TheBestServingTargetWithRecordsAndNoOtherIsa) {
  auto own = matmul(16, 16, 16);
  auto other = matmul(64, 64, 64);
  TuningCache cache(dir_.string());
  cache.append(split_record(*other, 4, 1e-6, "cpu:x86_64:testcpu:avx512:t2"));  // another ISA serves nothing
  EXPECT_TRUE(transferred_records(cache, {own, test::kRecordTarget, test::kRecordCompiler}, 8).empty());
  cache.append(split_record(*other, 2, 1e-6, "cpu:x86_64:othercpu:avx2:t2"));
  std::vector<TransferredRecord> found = transferred_records(TuningCache(dir_.string()), {own, test::kRecordTarget, test::kRecordCompiler}, 8);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0]), 2);
}

}  // namespace
}  // namespace ansor
