// What kernels.def programs mean: dtypes (weak literals, casts), floor division of indices,
// the inputs and outputs of a kernel, how nested reductions and tensor-form statements become
// operations and how they are named, kernel attributes and fragments, and when two kernels
// share a workload key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "lang_test_util.h"

namespace ansor {
namespace {

using test::body_of;
using test::load;
using test::load_kernel;
using test::names_of;
using test::op_named;
using test::op_names;
using ::testing::HasSubstr;

using Names = std::vector<std::string>;
using Shape = std::vector<int64_t>;

// ---- Dtypes --------------------------------------------------------------------------------------

DType dtype_of(const std::string& decls, const std::string& stmt) {
  Kernel k = load_kernel("kernel k {\n" + decls + "\n" + stmt + "\n}");
  return k.dag.ops().back()->dtype;
}

TEST(SemaTest, FloatLiteralTakesTheDtypeOfTheOtherOperand) {
  EXPECT_EQ(dtype_of("X = input f32[4]", "Y[i:4] = X[i] * 2.0"), DType::F32);
  EXPECT_EQ(dtype_of("X = input f64[4]", "Y[i:4] = X[i] * 2.0"), DType::F64);
  EXPECT_EQ(dtype_of("X = input f16[4]", "Y[i:4] = 0.5 - X[i]"), DType::F16);
  EXPECT_EQ(dtype_of("X = input bf16[4]", "Y = X * 2.0"), DType::BF16);
  Kernel k = load_kernel("kernel k { X = input f32[4]\n Y[i:4] = X[i] * 2.0 }");
  EXPECT_EQ(body_of(k, "Y"), "X[i] * 2.0");
}

TEST(SemaTest, IntegerLiteralInAFloatContextBecomesAFloat) {
  Kernel k = load_kernel("kernel k { X = input f32[4]\n Y[i:4] = X[i] + 1 }");
  EXPECT_EQ(op_named(k, "Y").dtype, DType::F32);
  EXPECT_EQ(body_of(k, "Y"), "X[i] + 1.0");
  EXPECT_EQ(dtype_of("X = input f64[4]", "Y[i:4] = max(X[i], 0)"), DType::F64);
}

TEST(SemaTest, IndexVariablesAreWeakIntegers) {
  EXPECT_EQ(dtype_of("X = input i32[4]", "Y[i:4] = X[i] + i"), DType::I32);
  EXPECT_EQ(dtype_of("X = input i8[4]", "Y[i:4] = X[i] * 2 + i"), DType::I8);
  EXPECT_EQ(dtype_of("X = input i64[4]", "Y[i:4] = X[i] % 3"), DType::I64);
}

TEST(SemaTest, WeakValuesAloneTakeDefaultDtypes) {
  EXPECT_EQ(dtype_of("", "Y[i:4] = i * 2"), DType::I32);
  EXPECT_EQ(dtype_of("", "Y[i:4] = 2.5"), DType::F32);
  EXPECT_EQ(dtype_of("", "Y[i:4] = i + 0.5"), DType::F32);
  EXPECT_EQ(dtype_of("", "Y[i:4] = i < 2"), DType::Bool);
  EXPECT_EQ(dtype_of("", "Y[i:4] = sqrt(i)"), DType::F32);
}

TEST(SemaTest, CastsConvertExplicitly) {
  Kernel k = load_kernel("kernel k { X = input f32[4]\n N = input i32[4]\n Y[i:4] = f32(i) * X[i] + f32(N[i]) }");
  EXPECT_EQ(op_named(k, "Y").dtype, DType::F32);
  EXPECT_EQ(body_of(k, "Y"), "f32(i) * X[i] + f32(N[i])");
  EXPECT_EQ(dtype_of("X = input f32[4]", "Y[i:4] = i32(X[i])"), DType::I32);
  EXPECT_EQ(dtype_of("X = input f32[4]", "Y[i:4] = f16(X[i]) + 1.0"), DType::F16);
  EXPECT_EQ(dtype_of("X = input i32[4]", "Y[i:4] = bool(X[i])"), DType::Bool);
  EXPECT_EQ(dtype_of("X = input bool[4]", "Y[i:4] = i32(X[i])"), DType::I32);
}

TEST(SemaTest, DeclarationsKeepTheirDtypeShapeAndConstness) {
  Kernel k = load_kernel("let N = 3\nkernel k {\n A = input u8[N, 2 * N]\n B = const bool[7]\n Y[i:N] = i32(A[i, 0]) }");
  const Operation& a = op_named(k, "A");
  EXPECT_TRUE(a.is_placeholder());
  EXPECT_EQ(a.dtype, DType::U8);
  EXPECT_EQ(a.shape, (Shape{3, 6}));
  EXPECT_FALSE(a.is_const);
  EXPECT_TRUE(op_named(k, "B").is_const);
  EXPECT_EQ(op_named(k, "B").dtype, DType::Bool);
}

TEST(SemaTest, ComparisonsAndLogicGiveBool) {
  Kernel k = load_kernel("kernel k { X = input f32[4]\n M[i:4] = X[i] > 0.0 && !(i == 2) || i >= 3 }");
  EXPECT_EQ(op_named(k, "M").dtype, DType::Bool);
}

// ---- Integer arithmetic --------------------------------------------------------------------------

TEST(SemaTest, ConstantsUseFloorDivisionAndModulo) {
  Kernel k = load_kernel(
      "let A = 0 - 7 / 2\nlet B = (0 - 7) / 2\nlet C = (0 - 7) % 3\nlet D = 7 % (0 - 3)\n"
      "kernel k { X = input f32[A + 10, B + 10, C, D + 5]\n Y[i:1] = X[0, 0, 0, 0] }");
  // 0 - 3 = -3, floor(-7 / 2) = -4, floor mod: -7 % 3 = 2, 7 % -3 = -2.
  EXPECT_EQ(op_named(k, "X").shape, (Shape{7, 6, 2, 3}));
}

TEST(SemaTest, IndicesUseFloorDivisionAndModulo) {
  // Truncating division would make (i - 1) % 4 negative at i = 0 and reject the access.
  Kernel k = load_kernel("kernel k { X = input f32[4]\n Y[i:4] = X[(i + 3) % 4] + X[(i - 1) % 4] }");
  EXPECT_EQ(body_of(k, "Y"), "X[(i + 3) % 4] + X[(i + 3) % 4]");
  // floor((i - 2) / 2) for i in [0, 3] is -1 or 0.
  Kernel d = load_kernel("kernel k { X = input f32[2]\n Y[i:4] = X[(i - 2) / 2 + 1] }");
  EXPECT_EQ(body_of(d, "Y"), "X[i / 2]");
}

TEST(SemaTest, IndexArithmeticIsSimplified) {
  Kernel k = load_kernel("kernel k { X = input f32[8, 8]\n Y[i:4, j:4] = X[2 * i + j - j, (i * 2 + 1) / 2 + j] }");
  EXPECT_EQ(body_of(k, "Y"), "X[i * 2, i + j]");
}

// Regression (found with the sanitizer build of the fuzz target): index arithmetic near the
// limits of int64 overflowed (undefined behaviour) while constants were folded, linear forms
// collected and bounds computed. Exact results are kept where int64 holds them.
TEST(SemaTest, IndexArithmeticNearTheLimitsOfInt64) {
  auto body = [](const std::string& index) {
    return body_of(load_kernel("kernel k { X = input f32[4]\n Y[i:4] = X[" + index + "] }"), "Y");
  };
  EXPECT_EQ(body("i + 4611686018427387904 + 4611686018427387904 - 4611686018427387904 - 4611686018427387904"), "X[i]");
  EXPECT_EQ(body("(i - 9223372036854775807) % 3"), "X[(i + 2) % 3]");
  EXPECT_EQ(body("(i - 9223372036854775807) / 4611686018427387904 + 2"), "X[0]");
  EXPECT_EQ(body("i / 4611686018427387904 / 4"), "X[0]");
  EXPECT_EQ(body("select(i > -9223372036854775807, i % 9223372036854775807, 0)"), "X[i]");
  // The constant 2^63 cannot be folded; the index is kept as written.
  EXPECT_EQ(body("(i + 9223372036854775807 + 1) % 4"), "X[(i + 9223372036854775807 + 1) % 4]");
}

TEST(SemaTest, SelectNarrowsIndexRangesInEachBranch) {
  Kernel k = load_kernel(
      "kernel k { X = input f32[4]\n"
      " P[h:6] = select(h >= 1 && h < 5, X[h - 1], 0.0)\n"
      " Q[h:6] = h < 1 || h > 4 ? 0.0 : X[h - 1] }");
  EXPECT_EQ(body_of(k, "P"), "select(h >= 1 && h < 5, X[h - 1], 0.0)");
  EXPECT_EQ(op_named(k, "Q").dtype, DType::F32);
}

// ---- Inputs and outputs --------------------------------------------------------------------------

TEST(SemaTest, InputsAreInDeclarationOrder) {
  Kernel k = load_kernel(
      "kernel k {\n W = const f32[4]\n X = input f32[4]\n Unused = input f32[2]\n b = const f32[4]\n"
      " Y[i:4] = X[i] * W[i] + b[i] }");
  EXPECT_EQ(names_of(k, k.dag.inputs()), (Names{"W", "X", "Unused", "b"}));
}

TEST(SemaTest, OutputsAreTensorsNoLaterStatementReads) {
  Kernel k = load_kernel(
      "kernel k {\n X = input f32[4]\n"
      " A[i:4] = X[i] + 1.0\n"   // read by B: intermediate
      " B[i:4] = A[i] * 2.0\n"   // never read: output
      " C[i:4] = X[i] - 1.0\n"   // read by D: intermediate
      " D[i:4] = C[i] + A[i]\n"  // output
      " E[i:4] = X[i] }");
  EXPECT_EQ(names_of(k, k.dag.outputs()), (Names{"B", "D", "E"}));
  EXPECT_TRUE(k.dag.is_output(k.dag.find("B")));
  EXPECT_FALSE(k.dag.is_output(k.dag.find("A")));
}

TEST(SemaTest, FlopCountCountsMultiplyAddAsTwo) {
  Kernel k = load_kernel("kernel k { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = sum(r:6, A[i, r] * B[r, j]) }");
  EXPECT_DOUBLE_EQ(k.dag.flop_count(), 2.0 * 4 * 5 * 6);
}

// ---- Reductions ----------------------------------------------------------------------------------

TEST(SemaTest, TopLevelReductionStaysInPlace) {
  Kernel k = load_kernel("kernel k { A = input f32[4, 8]\n S[i:4] = max(k:8, A[i, k]) }");
  EXPECT_EQ(op_names(k), (Names{"A", "S"}));
  EXPECT_EQ(body_of(k, "S"), "max(k:8, A[i, k])");
  ASSERT_NE(op_named(k, "S").reduction(), nullptr);
}

TEST(SemaTest, NestedReductionBecomesAnOperationOfItsOwn) {
  Kernel k = load_kernel("kernel k { X = input f32[4, 8]\n S[i:4] = sqrt(sum(k:8, X[i, k])) }");
  EXPECT_EQ(op_names(k), (Names{"X", "S.sum", "S"}));
  EXPECT_EQ(body_of(k, "S.sum"), "sum(k:8, X[i, k])");
  EXPECT_EQ(op_named(k, "S.sum").shape, (Shape{4}));
  EXPECT_EQ(body_of(k, "S"), "sqrt(S.sum[i])");
  EXPECT_EQ(names_of(k, k.dag.outputs()), (Names{"S"}));
}

TEST(SemaTest, NestedReductionsGetUniqueNamesAndOnlyTheAxesTheyUse) {
  Kernel k = load_kernel(
      "kernel k { X = input f32[4, 8]\n"
      " S[i:4, j:3] = sum(k:8, X[i, k]) / sum(k:8, X[0, k]) + f32(j) * prod(r:2, k:3, X[j, r * 3 + k]) }");
  EXPECT_EQ(op_names(k), (Names{"X", "S.sum", "S.sum.1", "S.prod", "S"}));
  EXPECT_EQ(op_named(k, "S.sum").shape, (Shape{4}));
  EXPECT_EQ(op_named(k, "S.sum.1").shape, Shape{});
  EXPECT_EQ(op_named(k, "S.prod").shape, (Shape{3}));
  EXPECT_EQ(body_of(k, "S"), "S.sum[i] / S.sum.1[] + f32(j) * S.prod[j]");
}

TEST(SemaTest, ReductionsOverSeveralAxesAndNestedReductions) {
  Kernel k = load_kernel("kernel k { X = input f32[2, 3, 4]\n S[i:2] = sum(j:3, k:4, X[i, j, k] * max(r:4, X[i, j, r])) }");
  EXPECT_EQ(op_names(k), (Names{"X", "S.max", "S"}));
  EXPECT_EQ(op_named(k, "S.max").shape, (Shape{2, 3}));
  EXPECT_EQ(body_of(k, "S"), "sum(j:3, k:4, X[i, j, k] * S.max[i, j])");
}

TEST(SemaTest, MinAndMaxWithTwoValuesAreElementwise) {
  Kernel k = load_kernel("kernel k { X = input f32[4]\n Y[i:4] = max(X[i], 0.0) + min(X[i], 1.0) }");
  EXPECT_EQ(body_of(k, "Y"), "max(X[i], 0.0) + min(X[i], 1.0)");
}

// ---- Tensor form ---------------------------------------------------------------------------------

TEST(SemaTest, TensorFormNamesTheFinalOperationAfterTheStatement) {
  Kernel k = load_kernel(
      "kernel k { X = input f32[2, 4]\n W = const f32[3, 4]\n b = const f32[3]\n Y = relu(bias_add(dense(X, W), b)) }");
  EXPECT_EQ(op_names(k), (Names{"X", "W", "b", "Y.dense", "Y.bias_add", "Y"}));
  EXPECT_EQ(body_of(k, "Y"), "relu(Y.bias_add[i0, i1])");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 3}));
  EXPECT_EQ(names_of(k, k.dag.outputs()), (Names{"Y"}));
}

TEST(SemaTest, TensorFormIntermediatesOfTheSameOperatorAreNumbered) {
  Kernel k = load_kernel("kernel k { X = input f32[4]\n Y = relu(relu(relu(X))) }");
  EXPECT_EQ(op_names(k), (Names{"X", "Y.relu", "Y.relu.1", "Y"}));
}

TEST(SemaTest, TensorFormArithmeticOperators) {
  Kernel k = load_kernel("kernel k { A = input f32[4]\n B = input f32[4]\n Y = -(A + B) * 2.0 / A - B % A }");
  EXPECT_EQ(op_names(k), (Names{"A", "B", "Y.add", "Y.neg", "Y.mul", "Y.div", "Y.mod", "Y"}));
  EXPECT_EQ(body_of(k, "Y.mul"), "Y.neg[i0] * 2.0");
  EXPECT_EQ(body_of(k, "Y"), "Y.div[i0] - Y.mod[i0]");
  Kernel c = load_kernel("kernel k { A = input f32[4]\n M = A > 0.0 && !(A == 1.0) || A != A }");
  EXPECT_EQ(op_named(c, "M").dtype, DType::Bool);
}

TEST(SemaTest, TensorFormConditionalAndScalars) {
  Kernel k = load_kernel("kernel k { A = input f32[4]\n Y = A > 0.0 ? A : 0.5 * A }");
  EXPECT_EQ(op_names(k), (Names{"A", "Y.gt", "Y.mul", "Y"}));
  EXPECT_EQ(body_of(k, "Y"), "select(Y.gt[i0], A[i0], Y.mul[i0])");
}

TEST(SemaTest, TensorFormOfAnExistingTensorCopiesIt) {
  Kernel k = load_kernel("kernel k { X = input i16[2, 3]\n Y = X\n Z[i:2] = X[i, 0]\n W = Z }");
  EXPECT_EQ(op_names(k), (Names{"X", "Y", "Z", "W"}));
  EXPECT_EQ(body_of(k, "Y"), "X[i0, i1]");
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2, 3}));
  EXPECT_EQ(op_named(k, "Y").dtype, DType::I16);
  EXPECT_EQ(body_of(k, "W"), "Z[i0]");
  EXPECT_EQ(names_of(k, k.dag.outputs()), (Names{"Y", "W"}));
}

TEST(SemaTest, TensorFormMixesWithIndexForm) {
  Kernel k = load_kernel("kernel k { X = input f32[4, 4]\n T = transpose(X)\n Y[i:4] = sum(j:4, T[i, j])\n Z = exp(Y) }");
  EXPECT_EQ(op_names(k), (Names{"X", "T", "Y", "Z"}));
  EXPECT_EQ(body_of(k, "Z"), "exp(Y[i0])");
}

TEST(SemaTest, LetConstantsInTensorFormAreScalars) {
  Kernel k = load_kernel("let S = 3\nkernel k { X = input f32[4]\n Y = X * S }");
  EXPECT_EQ(body_of(k, "Y"), "X[i0] * 3.0");
}

// ---- Names and scopes -----------------------------------------------------------------------------

TEST(SemaTest, KernelLocalLetsAndGlobalLets) {
  Kernel k = load_kernel("let N = 4\nkernel k {\n let M = N * 2\n X = input f32[M]\n let H = M / 4\n Y[i:H] = X[i * 4] }");
  EXPECT_EQ(op_named(k, "X").shape, (Shape{8}));
  EXPECT_EQ(op_named(k, "Y").shape, (Shape{2}));
  EXPECT_EQ(body_of(k, "Y"), "X[i * 4]");
}

TEST(SemaTest, LetConstantsInIndexExpressions) {
  Kernel k = load_kernel("let Off = 2\nkernel k { X = input f32[6]\n Y[i:4] = X[i + Off] }");
  EXPECT_EQ(body_of(k, "Y"), "X[i + 2]");
}

TEST(SemaTest, KernelsHaveSeparateNamespaces) {
  Program p = load("kernel a { X = input f32[2]\n Y = relu(X) }\nkernel b { X = input f64[3]\n Y = exp(X) }");
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "a");
  EXPECT_EQ(p.kernels[1].name, "b");
  EXPECT_EQ(op_named(p.kernels[1], "Y").dtype, DType::F64);
  ASSERT_NE(p.find("b"), nullptr);
  EXPECT_EQ(p.find("b")->name, "b");
  EXPECT_EQ(p.find("c"), nullptr);
}

TEST(SemaTest, KernelLocationIsItsName) {
  Program p = load("\n\nkernel  my_kernel { X = input f32[2]\n Y = relu(X) }");
  EXPECT_EQ(p.kernels[0].loc.line, 3);
  EXPECT_EQ(p.kernels[0].loc.column, 9);
}

// ---- Attributes ----------------------------------------------------------------------------------

TEST(SemaTest, AttributesAndTheirDefaults) {
  Program p = load(
      "kernel a { X = input f32[2]\n Y = relu(X) }\n"
      "kernel b (weight = 2.5, trials = 800, target = cuda) { X = input f32[2]\n Y = relu(X) }\n"
      "kernel c (target = \"llvm -mcpu=skylake\", weight = 3) { X = input f32[2]\n Y = relu(X) }");
  const KernelAttrs& a = p.kernels[0].attrs;
  EXPECT_DOUBLE_EQ(a.weight, 1.0);
  EXPECT_FALSE(a.trials.has_value());
  EXPECT_FALSE(a.target.has_value());
  const KernelAttrs& b = p.kernels[1].attrs;
  EXPECT_DOUBLE_EQ(b.weight, 2.5);
  EXPECT_EQ(b.trials, 800);
  EXPECT_EQ(b.target, "cuda");
  const KernelAttrs& c = p.kernels[2].attrs;
  EXPECT_EQ(c.target, "llvm -mcpu=skylake");
  EXPECT_DOUBLE_EQ(c.weight, 3.0);
}

// ---- Fragments and workload keys ------------------------------------------------------------------

TEST(SemaTest, FragmentHoldsTheLetsBeforeAKernelAndItsText) {
  Program p = load(
      "let N = 4\nlet M = N * 2   # folded\n"
      "kernel a { X = input f32[M]\n Y = relu(X) }\n"
      "let K = 0 - 3\n"
      "kernel b {\n  X = input f32[N]  # comment kept\n  Y = exp(X)\n}\n");
  EXPECT_EQ(p.kernels[0].fragment, "let N = 4\nlet M = 8\nkernel a { X = input f32[M]\n Y = relu(X) }\n");
  EXPECT_EQ(p.kernels[1].fragment,
            "let N = 4\nlet M = 8\nlet K = -3\nkernel b {\n  X = input f32[N]  # comment kept\n  Y = exp(X)\n}\n");
}

TEST(SemaTest, FragmentLoadsToTheSameWorkloadKey) {
  Program p = load("let N = 3\nlet Big = 9223372036854775807\nkernel k { X = input f32[N]\n Y[i:N] = X[i] * 2.0 }");
  Program alone = load(p.kernels[0].fragment);
  ASSERT_EQ(alone.kernels.size(), 1u);
  EXPECT_EQ(alone.kernels[0].dag.workload_key(), p.kernels[0].dag.workload_key());
}

// Regression (found by the fuzz target's fragment check): the fragment of a file with
// `let A = -9223372036854775807 - 1` spelled the constant as a literal the lexer rejects.
TEST(SemaTest, FragmentSpellsTheSmallestIntegerSoThatItLoads) {
  Program p = load("let A = -9223372036854775807 - 1\nkernel k { X = input f32[4]\n Y[i:4] = X[i] }");
  EXPECT_THAT(p.kernels[0].fragment, HasSubstr("let A = -9223372036854775807 - 1\n"));
  EXPECT_EQ(load(p.kernels[0].fragment).kernels.size(), 1u);
}

std::string key_of(const std::string& text) { return load_kernel(text).dag.workload_key(); }

TEST(SemaTest, WorkloadKeyIgnoresNamesFormattingAndComments) {
  std::string a = "kernel mm { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }";
  std::string b =
      "let M = 4\n# the same matmul\nkernel other_name {\n"
      "  Lhs = input f32[M, 6]   # renamed\n"
      "  Rhs = input f32[6, 5]\n"
      "  Out[row:M, col:5] =\n    sum(r:6, Lhs[row, r] * Rhs[r, col])\n}\n";
  EXPECT_EQ(key_of(a), key_of(b));
  EXPECT_EQ(key_of(a).size(), 32u);
  EXPECT_EQ(load_kernel(a).dag.canonical_text(), load_kernel(b).dag.canonical_text());
}

TEST(SemaTest, WorkloadKeyChangesWithShapeDtypeOrComputation) {
  std::string base = "kernel mm { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }";
  std::string shape = "kernel mm { A = input f32[4, 7]\n B = input f32[7, 5]\n C[i:4, j:5] = sum(k:7, A[i, k] * B[k, j]) }";
  std::string dtype = "kernel mm { A = input f64[4, 6]\n B = input f64[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }";
  std::string konst = "kernel mm { A = input f32[4, 6]\n B = const f32[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }";
  std::string op = "kernel mm { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = max(k:6, A[i, k] * B[k, j]) }";
  std::set<std::string> keys = {key_of(base), key_of(shape), key_of(dtype), key_of(konst), key_of(op)};
  EXPECT_EQ(keys.size(), 5u);
}

TEST(SemaTest, BuiltinAndIndexFormOfTheSameComputationShareAKey) {
  EXPECT_EQ(key_of("kernel a { A = input f32[4, 6]\n B = input f32[6, 5]\n C = matmul(A, B) }"),
            key_of("kernel b { A = input f32[4, 6]\n B = input f32[6, 5]\n C[i:4, j:5] = sum(k:6, A[i, k] * B[k, j]) }"));
}

// ---- Files ---------------------------------------------------------------------------------------

TEST(SemaTest, LoadProgramFileReadsTheFileAndNamesItInErrors) {
  std::string path = ::testing::TempDir() + "ansor_sema_test.def";
  {
    std::ofstream out(path, std::ios::binary);
    out << "kernel k { X = input f32[2]\n Y = relu(X) }\nkernel k { }\n";
  }
  try {
    load_program_file(path);
    ADD_FAILURE() << "duplicate kernel not reported";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.loc().file->path, path);
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_THAT(e.render(), HasSubstr(path + ":3:8: error: duplicate kernel 'k'"));
  }
  std::remove(path.c_str());
}

TEST(SemaTest, UnreadableFileIsAnErrorWithoutPosition) {
  try {
    load_program_file("/nonexistent/dir/kernels.def");
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_FALSE(e.loc().valid());
    EXPECT_EQ(e.render(), "error: cannot read '/nonexistent/dir/kernels.def'");
  }
}

// ---- Networks ------------------------------------------------------------------------------------

TEST(SemaTest, NetworksNameKernelsWithHowOftenTheyRun) {
  Program p = load(
      "network resnet (latency_ms = 4.5, reference_ms = 20) {\n"
      "  stem\n"
      "  block * 3, head * 0.5\n"
      "}\n"
      "kernel stem { X = input f32[4]\n Y = relu(X) }\n"
      "kernel block { X = input f32[4]\n Y = relu(X) }\n"
      "kernel head { X = input f32[4]\n Y = relu(X) }\n"
      "network small { block }\n");
  ASSERT_EQ(p.networks.size(), 2u);
  const Network& n = p.networks[0];
  EXPECT_EQ(n.name, "resnet");
  EXPECT_EQ(n.loc.line, 1);
  ASSERT_EQ(n.members.size(), 3u);
  EXPECT_EQ(n.members[0].kernel, "stem");
  EXPECT_EQ(n.members[0].count, 1);
  EXPECT_EQ(n.members[1].kernel, "block");
  EXPECT_EQ(n.members[1].count, 3);
  EXPECT_EQ(n.members[2].count, 0.5);
  EXPECT_EQ(n.latency_ms, 4.5);
  EXPECT_EQ(n.reference_ms, 20);
  EXPECT_FALSE(p.networks[1].latency_ms);
  EXPECT_FALSE(p.networks[1].reference_ms);
  // A kernel's fragment does not include the networks: editing one does not re-tune kernels.
  EXPECT_THAT(p.find("block")->fragment, ::testing::Not(HasSubstr("network")));
}

}  // namespace
}  // namespace ansor
