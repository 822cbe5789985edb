// The passes that take every decision of the compiled program, and the C++ generator printing
// exactly the loops they leave: one loop in the lowered program is one loop in the source.
#include <gtest/gtest.h>

#include <regex>

#include "codegen/cpp_generator.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/loop_passes.h"
#include "lower/stmt_printer.h"
#include "schedule/random_schedule.h"
#include "test_support.h"

namespace ansor {
namespace {

// A kernel over A[64] and B[64] with the given body.
LoweredKernel kernel_with(Stmt body) {
  LoweredKernel k;
  k.buffers = {test::buffer("A", {64}), test::buffer("B", {64}), test::buffer("Flags", {64}, BufferScope::Param, DType::Bool)};
  k.params = {0, 1, 2};
  k.body = std::move(body);
  return k;
}

Stmt copy_a_to_b(const Expr& i) { return make_store("B", {i}, load("A", DType::F32, {i})); }

int count_loops(const Stmt& s, ForKind kind) {
  int n = 0;
  for_each_stmt(s, [&](const Stmt& x) { n += x->as<ForNode>() && x->as<ForNode>()->for_kind == kind; });
  return n;
}

int count_stores(const Stmt& s) {
  int n = 0;
  for_each_stmt(s, [&n](const Stmt& x) { n += x->kind == StmtKind::Store; });
  return n;
}

TEST(LoopPassesTest, UnitLoopsBecomeTheirBodyButGpuBindingsStay) {
  Var i = make_var("i"), t = make_var("t");
  Stmt s = remove_unit_loops(make_for(i, 1, ForKind::Serial, copy_a_to_b(i)));
  ASSERT_NE(s->as<StoreNode>(), nullptr);
  EXPECT_EQ(to_string(s), "B[0] = A[0]\n");
  Stmt bound = remove_unit_loops(make_for(t, 1, ForKind::ThreadBinding, copy_a_to_b(t), IterAnnotation::ThreadX));
  EXPECT_NE(bound->as<ForNode>(), nullptr);
}

TEST(LoopPassesTest, ShortUnrolledLoopsAreWrittenOutLongOnesStayLoops) {
  Var i = make_var("i"), j = make_var("j");
  Stmt nest = make_for(i, 8, ForKind::Unrolled, make_for(j, 8, ForKind::Unrolled, copy_a_to_b(add(mul(i, 8), j))));
  Stmt expanded = expand_unrolled_loops(nest);
  EXPECT_EQ(count_stores(expanded), 64);
  EXPECT_EQ(count_loops(expanded, ForKind::Unrolled), 0);

  // 200 x 8 stores is over the limit: the inner loop is written out, the outer one stays.
  Stmt long_nest = make_for(i, 200, ForKind::Unrolled, make_for(j, 8, ForKind::Unrolled, copy_a_to_b(j)));
  Stmt partly = expand_unrolled_loops(long_nest);
  ASSERT_NE(partly->as<ForNode>(), nullptr);
  EXPECT_EQ(partly->as<ForNode>()->for_kind, ForKind::Unrolled);
  EXPECT_EQ(count_stores(partly), 8);
  EXPECT_EQ(count_loops(expand_unrolled_loops(long_nest, 2000), ForKind::Unrolled), 0);
}

TEST(LoopPassesTest, UnrolledLoopsOverTheElementCapStayLoops) {
  Var i = make_var("i"), j = make_var("j"), v = make_var("v");
  // 16 copies of a 64-lane vector statement: 1,024 elements in 32 statements, written out.
  auto vector_body = [&](int64_t copies) {
    return make_for(i, copies, ForKind::Unrolled, make_for(v, 64, ForKind::Vectorized, copy_a_to_b(v)));
  };
  Stmt within = expand_unrolled_loops(vector_body(16));
  EXPECT_EQ(count_loops(within, ForKind::Unrolled), 0);
  EXPECT_EQ(count_loops(within, ForKind::Vectorized), 16);
  // 64 copies are 128 statements, far under the statement limit, but 4,096 elements.
  Stmt over = expand_unrolled_loops(vector_body(64));
  ASSERT_NE(over->as<ForNode>(), nullptr);
  EXPECT_EQ(over->as<ForNode>()->for_kind, ForKind::Unrolled);
  EXPECT_EQ(count_loops(over, ForKind::Vectorized), 1);
  static_assert(64 * 64 > kMaxUnrolledElements && 16 * 64 <= kMaxUnrolledElements);

  // An inner unrolled loop left as a loop (over the statement limit) counts its iterations: the
  // compiler unrolls it in every copy.
  Stmt inner_long = make_for(j, 1100, ForKind::Unrolled, copy_a_to_b(j));
  Stmt outer = expand_unrolled_loops(make_for(i, 2, ForKind::Unrolled, inner_long));
  ASSERT_NE(outer->as<ForNode>(), nullptr);
  EXPECT_EQ(outer->as<ForNode>()->extent, 2);
  EXPECT_EQ(outer->as<ForNode>()->for_kind, ForKind::Unrolled);
  // A serial loop is written once in each copy whatever its extent.
  Stmt serial = expand_unrolled_loops(make_for(i, 4, ForKind::Unrolled, make_for(j, 5000, ForKind::Serial, copy_a_to_b(j))));
  EXPECT_EQ(count_loops(serial, ForKind::Serial), 4);
  EXPECT_EQ(count_loops(serial, ForKind::Unrolled), 0);
}

TEST(LoopPassesTest, VectorLoopsKeepTheirKindOnlyWhereVectorStatementsExist) {
  Var v = make_var("v");
  auto legalized_kind = [&](int64_t lanes, Stmt body) {
    Stmt s = legalize_vector_loops(kernel_with(nullptr), make_for(v, lanes, ForKind::Vectorized, std::move(body)));
    return s->as<ForNode>()->for_kind;
  };
  EXPECT_EQ(legalized_kind(8, copy_a_to_b(v)), ForKind::Vectorized);
  EXPECT_EQ(legalized_kind(6, copy_a_to_b(v)), ForKind::Vectorized) << "not a power of two: masked to 6 of 8 lanes";
  EXPECT_EQ(legalized_kind(6, make_store("B", {int_imm(0)}, load("A", DType::F32, {v}))), ForKind::VectorizeHint)
      << "not a power of two, and every lane stores the same element";
  EXPECT_EQ(legalized_kind(8, make_store("B", {int_imm(0)}, load("A", DType::F32, {v}))), ForKind::VectorizeHint)
      << "every lane stores the same element";
  EXPECT_EQ(legalized_kind(8, make_if(lt(v, int_imm(5)), copy_a_to_b(v))), ForKind::Vectorized) << "a prefix of the lanes: masked";
  EXPECT_EQ(legalized_kind(8, make_if(eq(v, int_imm(5)), copy_a_to_b(v))), ForKind::VectorizeHint) << "lane-dependent condition";
  EXPECT_EQ(legalized_kind(8, make_store("Flags", {v}, bool_imm(true))), ForKind::VectorizeHint) << "bool buffer";
  EXPECT_EQ(legalized_kind(8, make_for(make_var("w"), 2, ForKind::Serial, copy_a_to_b(v))), ForKind::VectorizeHint) << "inner loop";
}

// 56 elements split by 16 lanes: three whole vectors without a guard, then the 8 lanes the
// guard lets through as one vector of 8.
TEST(LoopPassesTest, RaggedVectorLoopsRunWholeVectorsAndAShorterLastOne) {
  Var o = make_var("o"), v = make_var("v");
  Expr i = add(mul(o, int_imm(16)), v);
  LoweredKernel k = kernel_with(make_for(o, 4, ForKind::Serial, make_for(v, 16, ForKind::Vectorized, make_if(lt(i, int_imm(56)), copy_a_to_b(i)))));
  finish_loop_program(k);
  EXPECT_EQ(to_string(k.body),
            "for o in 0..3:\n"
            "  vectorize v in 0..16:\n"
            "    B[o * 16 + v] = A[o * 16 + v]\n"
            "vectorize v in 0..8:\n"
            "  B[v + 48] = A[v + 48]\n");
  // A guard that lets other lanes than a prefix through keeps the last vector guarded.
  Expr odd = eq(mod(v, int_imm(2)), int_imm(1));
  LoweredKernel guarded = kernel_with(make_for(
      o, 4, ForKind::Serial, make_for(v, 16, ForKind::Vectorized, make_if(logical_and(lt(i, int_imm(56)), odd), copy_a_to_b(i)))));
  finish_loop_program(guarded);
  EXPECT_EQ(count_loops(guarded.body, ForKind::Vectorized), 0) << to_string(guarded.body);
}

// 53 elements split by 16 lanes: three whole vectors without a guard or a mask, then the last
// 5 lanes as a masked vector of 8 (5 is not a power of two).
TEST(LoopPassesTest, ARaggedVectorTailOfFiveLanesIsMasked) {
  Var o = make_var("o"), v = make_var("v");
  Expr i = add(mul(o, int_imm(16)), v);
  LoweredKernel k = kernel_with(make_for(o, 4, ForKind::Serial, make_for(v, 16, ForKind::Vectorized, make_if(lt(i, int_imm(53)), copy_a_to_b(i)))));
  LoweredKernel original = k;
  finish_loop_program(k);
  EXPECT_EQ(to_string(k.body),
            "for o in 0..3:\n"
            "  vectorize v in 0..16:\n"
            "    B[o * 16 + v] = A[o * 16 + v]\n"
            "vectorize v in 0..8 masked to 5:\n"
            "  B[v + 48] = A[v + 48]\n");
  std::vector<std::vector<double>> want = test::random_args(original, 3), got = want;
  interpret(original, want);
  interpret(k, got);
  EXPECT_EQ(got, want);
}

// A vector loop guarded lane by lane where the peeler does not see it (inside a register tile
// of two vectors, written out): the whole tiles run unswitched and unmasked, the last tile's
// vectors are masked to a count computed at run time.
TEST(LoopPassesTest, GuardedVectorsInsideRegisterTilesAreMaskedInTheLastTile) {
  Var o = make_var("o"), r = make_var("r"), v = make_var("v");
  Expr i = add(add(mul(o, int_imm(16)), mul(r, int_imm(8))), v);
  LoweredKernel k = kernel_with(make_for(
      o, 4, ForKind::Serial, make_for(r, 2, ForKind::Unrolled, make_for(v, 8, ForKind::Vectorized, make_if(lt(i, int_imm(53)), copy_a_to_b(i))))));
  LoweredKernel original = k;
  finish_loop_program(k);
  const std::string text = to_string(k.body);
  EXPECT_EQ(count_loops(k.body, ForKind::VectorizeHint), 0) << text;
  int masked = 0, unmasked = 0;
  for_each_stmt(k.body, [&](const Stmt& x) {
    if (auto* f = x->as<ForNode>(); f && f->for_kind == ForKind::Vectorized) (f->masked() ? masked : unmasked)++;
  });
  EXPECT_EQ(unmasked, 2) << text;
  EXPECT_EQ(masked, 2) << text;
  EXPECT_NE(text.find("masked to max(0, min(o * -16 + 45, 8))"), std::string::npos) << text;
  std::vector<std::vector<double>> want = test::random_args(original, 3), got = want;
  interpret(original, want);
  interpret(k, got);
  EXPECT_EQ(got, want);
}

// The interpreter runs the active lanes of a masked loop only: on the host, and in each GPU
// thread with its own count.
TEST(LoopPassesTest, MaskedLoopsRunTheirActiveLanesOnly) {
  Var o = make_var("o"), v = make_var("v");
  Expr i = add(mul(o, int_imm(16)), v);
  auto masked = [&](Expr count) {
    return std::make_shared<ForNode>(v, 16, ForKind::Vectorized, IterAnnotation::None, copy_a_to_b(i), std::move(count));
  };
  for (ForKind kind : {ForKind::Serial, ForKind::ThreadBinding}) {
    const IterAnnotation binding = kind == ForKind::ThreadBinding ? IterAnnotation::ThreadX : IterAnnotation::None;
    LoweredKernel k = kernel_with(make_for(o, 4, kind, masked(sub(int_imm(10), mul(o, int_imm(3)))), binding));
    std::vector<std::vector<double>> args = test::random_args(k, 3);
    const std::vector<double> before = args[1];
    interpret(k, args);
    for (int64_t e = 0; e < 64; ++e) {
      const bool active = e % 16 < 10 - 3 * (e / 16);
      EXPECT_EQ(args[1][e], active ? args[0][e] : before[e]) << "element " << e << (kind == ForKind::Serial ? " on the host" : " on a GPU");
    }
  }
}

// Only a guard that lets a prefix of the lanes through becomes a mask, and the conjuncts that
// do not depend on the lanes stay a guard.
TEST(LoopPassesTest, OnlyPrefixGuardsBecomeMasks) {
  Var o = make_var("o"), v = make_var("v");
  auto legalized = [&](Expr cond) {
    return legalize_vector_loops(kernel_with(nullptr), make_for(o, 4, ForKind::Serial, make_for(v, 16, ForKind::Vectorized, make_if(cond, copy_a_to_b(v)))));
  };
  Stmt prefix = legalized(logical_and(lt(add(v, mul(o, int_imm(16))), int_imm(53)), lt(o, int_imm(3))));
  EXPECT_EQ(to_string(prefix),
            "for o in 0..4:\n"
            "  vectorize v in 0..16 masked to min(o * -16 + 53, 16):\n"
            "    if o < 3:\n"
            "      B[v] = A[v]\n");
  EXPECT_EQ(count_loops(legalized(ge(v, int_imm(3))), ForKind::VectorizeHint), 1) << "a suffix of the lanes";
  EXPECT_EQ(count_loops(legalized(lt(mul(v, int_imm(2)), int_imm(9))), ForKind::VectorizeHint), 1) << "lanes at a stride";
  EXPECT_EQ(count_loops(legalized(lt(v, int_imm(40))), ForKind::VectorizeHint), 0) << "every lane: no mask";
  EXPECT_FALSE(legalized(lt(v, int_imm(40)))->as<ForNode>()->body->as<ForNode>()->masked());
}

// A[10, 10] copied to B in 4 x 4 tiles (3 x 3 of them, the last row and column ragged).
LoweredKernel ragged_tiles(ForKind tile_kind) {
  LoweredKernel k;
  k.buffers = {test::buffer("A", {10, 10}), test::buffer("B", {10, 10})};
  k.params = {0, 1};
  Var a = make_var("a"), b = make_var("b"), r = make_var("r"), c = make_var("c");
  Expr row = add(mul(a, int_imm(4)), r), col = add(mul(b, int_imm(4)), c);
  Stmt copy = make_store("B", {row, col}, load("A", DType::F32, {row, col}));
  Stmt guarded = make_if(logical_and(lt(row, int_imm(10)), lt(col, int_imm(10))), copy);
  k.body = make_for(a, 3, tile_kind, make_for(b, 3, ForKind::Serial, make_for(r, 4, ForKind::Serial, make_for(c, 4, ForKind::Serial, guarded))));
  return k;
}

TEST(LoopPassesTest, RaggedTilesRunWholeTilesUnguarded) {
  LoweredKernel k = ragged_tiles(ForKind::Parallel);
  LoweredKernel original = k;
  finish_loop_program(k);
  EXPECT_EQ(to_string(k.body),
            "parallel a in 0..3:\n"
            "  if a * 4 + 3 < 10:\n"
            "    for b in 0..3:\n"
            "      if b * 4 + 3 < 10:\n"
            "        for r in 0..4:\n"
            "          for c in 0..4:\n"
            "            B[a * 4 + r, b * 4 + c] = A[a * 4 + r, b * 4 + c]\n"
            "      else:\n"
            "        for r in 0..4:\n"
            "          for c in 0..4:\n"
            "            if b * 4 + c < 10:\n"
            "              B[a * 4 + r, b * 4 + c] = A[a * 4 + r, b * 4 + c]\n"
            "  else:\n"
            "    for b in 0..3:\n"
            "      if b * 4 + 3 < 10:\n"
            "        for r in 0..4:\n"
            "          for c in 0..4:\n"
            "            if a * 4 + r < 10:\n"
            "              B[a * 4 + r, b * 4 + c] = A[a * 4 + r, b * 4 + c]\n"
            "      else:\n"
            "        for r in 0..4:\n"
            "          for c in 0..4:\n"
            "            if a * 4 + r < 10 && b * 4 + c < 10:\n"
            "              B[a * 4 + r, b * 4 + c] = A[a * 4 + r, b * 4 + c]\n")
      << to_string(k.body);
  std::vector<std::vector<double>> want = test::random_args(original, 3), got = want;
  interpret(original, want);
  interpret(k, got);
  EXPECT_EQ(got, want);
  // The features' view keeps the guards where lowering put them.
  LoweredKernel as_scheduled = ragged_tiles(ForKind::Parallel);
  finish_loop_program(as_scheduled, /*expand_unrolled=*/false);
  EXPECT_EQ(to_string(as_scheduled.body), to_string(original.body));
}

// A register tile of two 16-lane vectors along a ragged vector axis (B[56] in tiles of 32, as
// the sampler draws for extents without whole-vector divisors): the whole tiles run their
// vectors unguarded, only the last tile's last vector is masked, and the vectors that no tile
// overshoots are written once.
TEST(LoopPassesTest, RaggedVectorTilesRunWholeVectorsUnguarded) {
  Var o = make_var("o"), t = make_var("t"), v = make_var("v");
  Expr i = add(add(mul(o, int_imm(32)), mul(t, int_imm(16))), v);
  Stmt tile = make_for(t, 2, ForKind::Serial, make_for(v, 16, ForKind::Vectorized, make_if(lt(i, int_imm(56)), copy_a_to_b(i))));
  LoweredKernel k = kernel_with(make_for(o, 2, ForKind::Parallel, tile));
  LoweredKernel original = k;
  finish_loop_program(k);
  EXPECT_EQ(to_string(k.body),
            "parallel o in 0..2:\n"
            "  for t in 0..1:\n"
            "    vectorize v in 0..16:\n"
            "      B[o * 32 + t * 16 + v] = A[o * 32 + t * 16 + v]\n"
            "  if o * 32 + 31 < 56:\n"
            "    vectorize v in 0..16:\n"
            "      B[o * 32 + 16 + v] = A[o * 32 + 16 + v]\n"
            "  else:\n"
            "    vectorize v in 0..16 masked to min(o * -32 + 40, 16):\n"
            "      B[o * 32 + 16 + v] = A[o * 32 + 16 + v]\n")
      << to_string(k.body);
  std::vector<std::vector<double>> want = test::random_args(original, 3), got = want;
  interpret(original, want);
  interpret(k, got);
  EXPECT_EQ(got, want);
}

TEST(LoopPassesTest, GuardsAroundBarriersAndInsideUnrolledLoopsStay) {
  LoweredKernel unrolled = ragged_tiles(ForKind::Unrolled);
  finish_loop_program(unrolled, /*expand_unrolled=*/true);
  // Not unswitched inside the unrolled row loop, which is written out: each copy keeps its
  // row guard, and each copy's column loop unswitches its own guard.
  const std::string text = to_string(unrolled.body);
  int unswitched = 0;
  for (size_t at = text.find("else:"); at != std::string::npos; at = text.find("else:", at + 1)) ++unswitched;
  EXPECT_EQ(unswitched, 3) << text;
  EXPECT_NE(text.find("        if r + 8 < 10:\n          B[r + 8, b * 4 + c]"), std::string::npos) << text;
  Var a = make_var("a"), r = make_var("r");
  Expr row = add(mul(a, int_imm(16)), r);
  Stmt body = make_seq({make_if(lt(row, int_imm(56)), copy_a_to_b(row)), make_barrier()});
  LoweredKernel synced = kernel_with(make_for(a, 4, ForKind::Serial, make_for(r, 16, ForKind::Serial, body)));
  const std::string before = to_string(synced.body);
  finish_loop_program(synced);
  EXPECT_EQ(to_string(synced.body), before);
}

// The written-out copies of an unrolled loop over a ragged reduction (9 = 4 x 2 + 1): each
// copy's guard is decided by the loop inside it, and only the last copy keeps a test.
TEST(LoopPassesTest, GuardsTheLoopsAroundThemDecideAreDropped) {
  Var k = make_var("k"), q = make_var("q");
  Expr at = add(mul(k, int_imm(2)), q);
  Stmt body = make_for(q, 2, ForKind::Serial, make_if(lt(at, int_imm(9)), copy_a_to_b(at)));
  LoweredKernel unrolled = kernel_with(make_for(k, 5, ForKind::Unrolled, body));
  finish_loop_program(unrolled);
  const std::string text = to_string(unrolled.body);
  EXPECT_EQ(count_stores(unrolled.body), 5) << text;
  EXPECT_EQ(text.find("< 9"), text.rfind("< 9")) << text;
  EXPECT_NE(text.find("if q + 8 < 9:"), std::string::npos) << text;
  // A guard that fails on every iteration takes its statement with it.
  Stmt never = decide_guards(make_for(q, 2, ForKind::Serial, make_if(lt(q, int_imm(0)), copy_a_to_b(q))));
  EXPECT_EQ(count_stores(never), 0) << to_string(never);
}

TEST(LoopPassesTest, LargeLocalBuffersMoveToTheAllocator) {
  LoweredKernel k = kernel_with(make_seq({}));
  k.buffers.push_back(test::buffer("small", {1024}, BufferScope::Local));
  k.buffers.push_back(test::buffer("large", {64 * 1024}, BufferScope::Local));
  k.buffers.push_back(test::buffer("shared", {64 * 1024}, BufferScope::Shared));
  place_local_buffers(k);
  EXPECT_EQ(k.find_buffer("small")->scope, BufferScope::Local);
  EXPECT_EQ(k.find_buffer("large")->scope, BufferScope::LocalHeap);
  EXPECT_EQ(k.find_buffer("shared")->scope, BufferScope::Shared);
}

constexpr const char* kLoopPassKernels = R"(
kernel matmul {
  A = input f32[24, 20]
  B = const f32[20, 28]
  C[i:24, j:28] = sum(k:20, A[i, k] * B[k, j])
}
kernel conv_bias_relu {
  X = input f32[1, 4, 6, 6]
  W = const f32[5, 4, 3, 3]
  b = const f32[5]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel softmax {
  X = input f32[6, 13]
  Y = softmax(X, axis = -1)
}
)";

int count_all_loops(const LoweredKernel& k) {
  int n = 0;
  for (ForKind kind : {ForKind::Serial, ForKind::Parallel, ForKind::VectorizeHint, ForKind::Unrolled}) n += count_loops(k.body, kind);
  for (const LoweredKernel& p : k.packers) n += count_all_loops(p);
  return n;
}

TEST(LoopPassesTest, TheCppGeneratorPrintsExactlyTheLoopsLoweringLeft) {
  Program program = test::parse(kLoopPassKernels);
  const CppGenerator cpp;
  const std::regex loop_header(R"(for \(int64_t )");
  int checked = 0;
  for (const Kernel& kernel : program.kernels) {
    auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
    for (uint64_t seed = 0; seed < 40; ++seed) {
      State state = random_schedule(dag, seed);
      LoweredKernel lowered = lower_state(state, "k");
      std::string source = cpp.kernel_definitions(lowered, *dag, kernel.name, "k", "test");
      auto loops = std::distance(std::sregex_iterator(source.begin(), source.end(), loop_header), std::sregex_iterator());
      EXPECT_EQ(loops, count_all_loops(lowered)) << kernel.name << " seed " << seed << "\n" << to_string(lowered) << source;
      EXPECT_EQ(source.find("ANSOR_VECTORIZE_LOOP") != std::string::npos, count_loops(lowered.body, ForKind::VectorizeHint) > 0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 120);
}

}  // namespace
}  // namespace ansor
