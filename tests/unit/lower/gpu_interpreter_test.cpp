// GPU programs under GPU semantics: sampled CUDA schedules, lowered with their barriers and run in
// the interpreter thread by thread in lock step, compute what the naive program computes; without
// one of their barriers they race, and a barrier only part of a block reaches is an error.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>

#include "lang/program.h"
#include "lower/gpu_sync.h"
#include "lower/interpreter.h"
#include "lower/lower.h"
#include "lower/stmt_printer.h"
#include "target/target.h"
#include "sampler/annotation.h"
#include "schedule/steps.h"
#include "test_support.h"

namespace ansor {
namespace {

constexpr const char* kGpuKernels = R"(
kernel matmul {
  A = input f32[24, 16]
  B = const f32[16, 20]
  C[i:24, j:20] = sum(k:16, A[i, k] * B[k, j])
}
kernel matmul_relu {
  A = input f32[13, 12]
  B = input f32[12, 17]
  C = relu(matmul(A, B))
}
kernel conv_bias_relu {
  X = input f32[1, 4, 7, 7]
  W = const f32[6, 4, 3, 3]
  b = const f32[6]
  Y = relu(bias_add(conv2d_nchw(X, W, pad = 1), b))
}
kernel row_norm {
  X = input f32[6, 40]
  S[i:6] = sqrt(sum(k:40, X[i, k] * X[i, k]))
}
kernel softmax {
  X = input f32[6, 20]
  Y = softmax(X)
}
kernel row_sum {
  X = input f32[3, 100]
  S[i:3] = sum(k:100, X[i, k] * 2)
}
kernel softmax_wide {
  X = input f32[2, 70]
  Y = softmax(X)
}
kernel largest {
  X = input f32[150]
  M[i:1] = max(k:150, X[k] - 1)
}
kernel elementwise {
  A = input f32[12, 10]
  B = input f32[10]
  C[i:12, j:10] = A[i, j] * B[j] + 1
}
)";

constexpr int kSeedsPerSketch = 10;

int count_barriers(const Stmt& s) {
  int n = 0;
  for_each_stmt(s, [&n](const Stmt& x) { n += x->kind == StmtKind::Barrier; });
  return n;
}

// The k-th barrier (in program order) replaced by what `replace` makes of it, given the
// variable of the innermost enclosing loop bound to threadIdx.x (null outside any).
using BarrierReplacement = std::function<Stmt(const Var* thread_x)>;

Stmt replace_barrier(const Stmt& s, int& k, const Var* thread_x, const BarrierReplacement& replace) {
  switch (s->kind) {
    case StmtKind::Barrier: return k-- == 0 ? replace(thread_x) : s;
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      const Var* inner_thread_x = f->binding == IterAnnotation::ThreadX ? &f->var : thread_x;
      return make_for_like(*f, replace_barrier(f->body, k, inner_thread_x, replace));
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      return make_allocate(a->buffer, replace_barrier(a->body, k, thread_x, replace));
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      Stmt then_case = replace_barrier(i->then_case, k, thread_x, replace);
      Stmt else_case = i->else_case ? replace_barrier(i->else_case, k, thread_x, replace) : nullptr;
      return std::make_shared<IfThenElseNode>(i->cond, then_case, else_case);
    }
    case StmtKind::Seq: {
      std::vector<Stmt> out;
      for (const Stmt& x : s->as<SeqNode>()->stmts) out.push_back(replace_barrier(x, k, thread_x, replace));
      return std::make_shared<SeqNode>(std::move(out));
    }
    case StmtKind::Store: return s;
  }
  return s;
}

LoweredKernel with_barrier_replaced(const LoweredKernel& k, int index, const BarrierReplacement& replace) {
  LoweredKernel out = k;
  out.body = replace_barrier(k.body, index, nullptr, replace);
  return out;
}

bool has_thread_reduction(const Stmt& body) {
  bool found = false;
  for_each_stmt(body, [&found](const Stmt& x) {
    auto* st = x->as<StoreNode>();
    found = found || (st && st->across_threads);
  });
  return found;
}

bool has_shared_buffer(const LoweredKernel& k) {
  for (const Buffer& b : k.buffers)
    if (b.scope == BufferScope::Shared) return true;
  return false;
}

// The message interpret() throws on the kernel, or "" when it runs through.
std::string interpret_error(const LoweredKernel& k, const std::vector<std::vector<double>>& inputs) {
  std::vector<std::vector<double>> args = test::packed_args(k, inputs);
  try {
    interpret(k, args);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

struct Sampled {
  std::string what;
  LoweredKernel kernel;
};

struct KernelCase {
  LoweredKernel naive;
  std::vector<std::vector<double>> inputs, expected;
};

// Every sketch of the CUDA context annotated with several seeds; the programs that lower.
std::vector<Sampled> sample_gpu_programs(const std::shared_ptr<const ComputeDAG>& dag, const std::string& name, int& not_lowerable) {
  SamplerContext ctx = SamplerContext::for_gpu(parse_target("cuda:sm_80"));
  Annotator annotator(ctx);
  std::vector<Sampled> out;
  std::vector<Sketch> sketches = generate_sketches(dag, ctx, SketchRules::gpu());
  for (size_t s = 0; s < sketches.size(); ++s) {
    for (uint64_t seed = 0; seed < kSeedsPerSketch; ++seed) {
      std::mt19937_64 rng(seed);
      std::string what = name + " sketch " + std::to_string(s) + " seed " + std::to_string(seed);
      try {
        out.push_back({what, lower_state(annotator.annotate(sketches[s].state, rng), "k")});
      } catch (const InvalidState&) {
        ++not_lowerable;
      }
    }
  }
  return out;
}

void expect_outputs_match(const Sampled& p, const KernelCase& c) {
  std::vector<std::vector<double>> args = test::packed_args(p.kernel, c.inputs);
  try {
    interpret(p.kernel, args);
  } catch (const std::runtime_error& e) {
    FAIL() << p.what << ": " << e.what() << "\n" << to_string(p.kernel);
  }
  for (size_t a = 0; a < args.size(); ++a) {
    if (!c.naive.buffers[c.naive.params[a]].is_output) continue;
    for (size_t e = 0; e < args[a].size(); ++e)
      ASSERT_NEAR(args[a][e], c.expected[a][e], 1e-4 * std::max(1.0, std::fabs(c.expected[a][e])))
          << p.what << ", element " << e << "\n" << to_string(p.kernel);
  }
}

// Matmul blocks of `rows` threads, one per row of the block's tile, with A and B read through
// shared memory once per `k_tile` slice of the reduction: the shared stages are computed at the
// block level, by one thread or spread over the block's threads.
std::optional<LoweredKernel> block_level_shared_matmul(const std::shared_ptr<const ComputeDAG>& dag, int64_t rows, int64_t k_tile,
                                                       bool cooperative) {
  State s(dag);
  s.apply(std::make_shared<CacheReadStep>(0, MemoryScope::Shared, std::vector<int>{2}));  // A.shared: stage 1, C: 3
  s.apply(std::make_shared<CacheReadStep>(2, MemoryScope::Shared, std::vector<int>{3}));  // B.shared: stage 3, C: 4
  const int c = 4;
  s.apply(std::make_shared<SplitStep>(c, 2, std::vector<int64_t>{k_tile}));  // i j k.0 k.1
  s.apply(std::make_shared<SplitStep>(c, 0, std::vector<int64_t>{rows}));    // i.0 i.1 j k.0 k.1
  s.apply(std::make_shared<ReorderStep>(c, std::vector<int>{0, 3, 1, 2, 4}));  // i.0 k.0 i.1 j k.1
  s.apply(std::make_shared<AnnotateStep>(c, 0, IterAnnotation::BlockX));
  s.apply(std::make_shared<AnnotateStep>(c, 2, IterAnnotation::ThreadX));
  for (int shared : {1, 3}) {
    s.apply(std::make_shared<ComputeAtStep>(shared, c, 1));
    if (!cooperative) continue;
    s.apply(std::make_shared<FuseStep>(shared, std::vector<int>{0, 1}));
    s.apply(std::make_shared<SplitStep>(shared, 0, std::vector<int64_t>{rows}));
    s.apply(std::make_shared<AnnotateStep>(shared, 1, IterAnnotation::ThreadX));
  }
  try {
    infer_bounds(s);
    return lower_state(s, "k");
  } catch (const InvalidState&) {
    return std::nullopt;
  }
}

struct SampledPrograms {
  std::vector<KernelCase> cases;
  std::vector<Sampled> programs;
  std::vector<size_t> case_of;  // per program, its kernel's case
  int not_lowerable = 0;
};

// Sampled once for all tests of the suite.
const SampledPrograms& sampled_programs() {
  static const SampledPrograms sampled = [] {
    SampledPrograms out;
    Program program = test::parse(kGpuKernels, "gpu_interpreter_test.def");
    for (const Kernel& kernel : program.kernels) {
      auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
      KernelCase c;
      c.naive = lower_state(State(dag), "naive");
      c.inputs = test::random_args(c.naive, 5);
      c.expected = c.inputs;
      interpret(c.naive, c.expected);
      for (Sampled& p : sample_gpu_programs(dag, kernel.name, out.not_lowerable)) {
        out.programs.push_back(std::move(p));
        out.case_of.push_back(out.cases.size());
      }
      out.cases.push_back(std::move(c));
    }
    // Programs whose blocks communicate through shared memory.
    auto dag = test::dag_of(program, "matmul");
    for (int64_t rows : {1, 2, 3, 4, 6, 8, 12, 24})
      for (int64_t k_tile : {1, 2, 4, 16})
        for (bool cooperative : {false, true})
          if (std::optional<LoweredKernel> k = block_level_shared_matmul(dag, rows, k_tile, cooperative)) {
            out.programs.push_back({fmt::format("matmul, {} threads, k tile {}{}", rows, k_tile, cooperative ? ", cooperative fetch" : ""),
                                    std::move(*k)});
            out.case_of.push_back(0);
          }
    return out;
  }();
  return sampled;
}

TEST(GpuInterpreterTest, SampledGpuSchedulesMatchTheNaiveProgram) {
  const SampledPrograms& sampled = sampled_programs();
  int with_shared = 0, with_barriers = 0, sampled_with_shared = 0, with_thread_reductions = 0;
  for (size_t p = 0; p < sampled.programs.size(); ++p) {
    const Sampled& program = sampled.programs[p];
    expect_outputs_match(program, sampled.cases[sampled.case_of[p]]);
    with_shared += has_shared_buffer(program.kernel) ? 1 : 0;
    with_barriers += count_barriers(program.kernel.body) > 0 ? 1 : 0;
    sampled_with_shared += has_shared_buffer(program.kernel) && program.what.find(" sketch ") != std::string::npos ? 1 : 0;
    with_thread_reductions += has_thread_reduction(program.kernel.body) ? 1 : 0;
  }
  std::printf("%zu GPU programs checked, %d with shared buffers (%d of them sampled), %d with barriers, %d reducing across threads\n",
              sampled.programs.size(), with_shared, sampled_with_shared, with_barriers, with_thread_reductions);
  EXPECT_EQ(sampled.not_lowerable, 0) << "every annotated GPU sketch lowers";
  EXPECT_GE(sampled.programs.size(), 120u);
  EXPECT_GE(sampled_with_shared, 20);
  EXPECT_GE(with_shared, 80);
  EXPECT_GE(with_barriers, 60);
  EXPECT_GE(with_thread_reductions, 20);
}

TEST(GpuInterpreterTest, EveryBarrierOfASampledProgramIsNeeded) {
  int removed = 0;
  const SampledPrograms& sampled = sampled_programs();
  for (size_t p = 0; p < sampled.programs.size() && removed < 60; ++p) {
    const Sampled& program = sampled.programs[p];
    const KernelCase& c = sampled.cases[sampled.case_of[p]];
    int barriers = count_barriers(program.kernel.body);
    for (int b = 0; b < barriers; ++b) {
      LoweredKernel without = with_barrier_replaced(program.kernel, b, [](const Var*) { return make_seq({}); });
      EXPECT_NE(interpret_error(without, c.inputs).find("without a barrier between them"), std::string::npos)
          << program.what << ", barrier " << b << " removed\n" << to_string(without);
      ++removed;
    }
  }
  EXPECT_GE(removed, 20);
}

TEST(GpuInterpreterTest, ABarrierInAThreadDependentConditionDiverges) {
  const SampledPrograms& sampled = sampled_programs();
  int diverged = 0;
  for (size_t p = 0; p < sampled.programs.size() && diverged < 20; ++p) {
    const Sampled& program = sampled.programs[p];
    const KernelCase& c = sampled.cases[sampled.case_of[p]];
    if (count_barriers(program.kernel.body) == 0) continue;
    // Only thread 0 of the block waits (outside the threads' loops, in a loop over all of them).
    int64_t threads = block_thread_dims(program.kernel.body)[0];
    LoweredKernel divergent = with_barrier_replaced(program.kernel, 0, [&](const Var* thread_x) {
      if (thread_x) return make_if(lt(*thread_x, int_imm(1)), make_barrier());
      Var t = make_var("t");
      return make_for(t, threads, ForKind::ThreadBinding, make_if(lt(t, int_imm(1)), make_barrier()), IterAnnotation::ThreadX);
    });
    EXPECT_NE(interpret_error(divergent, c.inputs).find(fmt::format("only 1 of the {} threads", threads)), std::string::npos)
        << program.what << "\n" << to_string(divergent);
    ++diverged;
  }
  EXPECT_GE(diverged, 10);
}

// A block of two threads, each writing its element of a shared buffer and reading the other's.
class TwoThreadExchange {
 public:
  TwoThreadExchange() {
    kernel_.name = "exchange";
    kernel_.buffers = {Buffer{"out", DType::F32, {2}, {1}, BufferScope::Param, true, false, {}},
                       Buffer{"S", DType::F32, {2}, {1}, BufferScope::Shared, false, false, {}}};
    kernel_.params = {0};
  }

  LoweredKernel program(bool with_barrier) const {
    Var bx = make_var("bx"), tx = make_var("tx");
    Stmt write = make_store("S", {tx}, add(cast(DType::F32, tx), float_imm(10)));
    Stmt read = make_store("out", {tx}, load("S", DType::F32, {sub(int_imm(1), tx)}));
    Stmt body = with_barrier ? make_seq({write, make_barrier(), read}) : make_seq({write, read});
    LoweredKernel k = kernel_;
    k.body = make_for(bx, 1, ForKind::ThreadBinding,
                      make_for(tx, 2, ForKind::ThreadBinding, make_allocate("S", body), IterAnnotation::ThreadX), IterAnnotation::BlockX);
    return k;
  }

 private:
  LoweredKernel kernel_;
};

TEST(GpuInterpreterHandBuiltTest, TwoThreadsExchangeThroughSharedMemoryOnlyWithABarrier) {
  TwoThreadExchange exchange;
  std::vector<std::vector<double>> args = {{0, 0}};
  interpret(exchange.program(true), args);
  EXPECT_EQ(args[0], (std::vector<double>{11, 10}));

  try {
    interpret(exchange.program(false), args);
    FAIL() << "the exchange without a barrier ran through";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "interpret: threads 0 and 1 of block 0 access 'S' element 1 without a barrier between them");
  }
}

TEST(GpuInterpreterHandBuiltTest, BarrierInsertionSynchronisesTheExchange) {
  TwoThreadExchange exchange;
  LoweredKernel synced = insert_gpu_barriers(exchange.program(false));
  EXPECT_EQ(count_barriers(synced.body), 1);
  std::vector<std::vector<double>> args = {{0, 0}};
  interpret(synced, args);
  EXPECT_EQ(args[0], (std::vector<double>{11, 10}));
  // Already synchronised: nothing to add.
  EXPECT_EQ(count_barriers(insert_gpu_barriers(exchange.program(true)).body), 1);
}

// A shared element written outside the threads' loops is written by one thread, then read by all.
TEST(GpuInterpreterHandBuiltTest, ASharedValueComputedOutsideTheThreadLoopsIsWrittenOnce) {
  LoweredKernel k;
  k.name = "broadcast";
  k.buffers = {Buffer{"out", DType::F32, {4}, {1}, BufferScope::Param, true, false, {}},
               Buffer{"S", DType::F32, {1}, {1}, BufferScope::Shared, false, false, {}}};
  k.params = {0};
  Var bx = make_var("bx"), tx = make_var("tx");
  Stmt produce = make_store("S", {int_imm(0)}, float_imm(5));
  Stmt consume = make_for(tx, 4, ForKind::ThreadBinding,
                          make_store("out", {tx}, add(load("S", DType::F32, {int_imm(0)}), cast(DType::F32, tx))), IterAnnotation::ThreadX);
  k.body = make_for(bx, 1, ForKind::ThreadBinding, make_allocate("S", make_seq({produce, consume})), IterAnnotation::BlockX);

  std::vector<std::vector<double>> args = {{0, 0, 0, 0}};
  EXPECT_THROW(interpret(k, args), std::runtime_error);  // every thread writes S[0]
  LoweredKernel synced = insert_gpu_barriers(k);
  EXPECT_EQ(count_barriers(synced.body), 1);
  interpret(synced, args);
  EXPECT_EQ(args[0], (std::vector<double>{5, 6, 7, 8}));
}

TEST(GpuInterpreterHandBuiltTest, SharedMemoryInsideAThreadDependentConditionCannotBeLowered) {
  LoweredKernel k;
  k.name = "divergent";
  k.buffers = {Buffer{"out", DType::F32, {4}, {1}, BufferScope::Param, true, false, {}},
               Buffer{"S", DType::F32, {4}, {1}, BufferScope::Shared, false, false, {}}};
  k.params = {0};
  Var bx = make_var("bx"), tx = make_var("tx");
  Stmt exchange = make_seq({make_store("S", {tx}, float_imm(1)), make_store("out", {tx}, load("S", DType::F32, {sub(int_imm(1), tx)}))});
  k.body = make_for(bx, 1, ForKind::ThreadBinding,
                    make_allocate("S", make_for(tx, 4, ForKind::ThreadBinding, make_if(lt(tx, int_imm(2)), exchange), IterAnnotation::ThreadX)),
                    IterAnnotation::BlockX);
  EXPECT_THROW(insert_gpu_barriers(k), InvalidState);

  std::vector<std::vector<double>> args = {{0, 0, 0, 0}};
  LoweredKernel diverging = k;
  diverging.body = make_for(bx, 1, ForKind::ThreadBinding,
                            make_for(tx, 4, ForKind::ThreadBinding, make_if(lt(tx, int_imm(2)), make_barrier()), IterAnnotation::ThreadX),
                            IterAnnotation::BlockX);
  try {
    interpret(diverging, args);
    FAIL() << "a barrier half the block reaches ran through";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "interpret: only 2 of the 4 threads of block 0 reach barrier 0 (in program order)");
  }
}

// Rows of a block's threads (threadIdx.y) each reduce their threadIdx.x values into one element.
LoweredKernel rows_reduced_across_threads(bool divergent) {
  LoweredKernel k;
  k.name = "row_sums";
  k.buffers = {Buffer{"out", DType::F32, {2}, {1}, BufferScope::Param, true, false, {}}};
  k.params = {0};
  Var bx = make_var("bx"), ty = make_var("ty"), tx = make_var("tx");
  Stmt reduce = make_store("out", {ty}, add(cast(DType::F32, tx), mul(cast(DType::F32, ty), float_imm(10))),
                           ThreadReduction{ReduceOp::Sum, tx, IterAnnotation::ThreadX});
  if (divergent) reduce = make_if(lt(tx, int_imm(2)), reduce);
  k.body = make_for(bx, 1, ForKind::ThreadBinding,
                    make_for(ty, 2, ForKind::ThreadBinding, make_for(tx, 4, ForKind::ThreadBinding, reduce, IterAnnotation::ThreadX),
                             IterAnnotation::ThreadY),
                    IterAnnotation::BlockX);
  return k;
}

TEST(GpuInterpreterHandBuiltTest, ThreadsReduceTheirValuesPerRowOfTheBlock) {
  std::vector<std::vector<double>> args = {{0, 0}};
  interpret(insert_gpu_barriers(rows_reduced_across_threads(false)), args);
  EXPECT_EQ(args[0], (std::vector<double>{0 + 1 + 2 + 3, 10 + 11 + 12 + 13}));
}

TEST(GpuInterpreterHandBuiltTest, AReductionAcrossThreadsThatOnlySomeThreadsReachIsRefused) {
  EXPECT_THROW(insert_gpu_barriers(rows_reduced_across_threads(true)), InvalidState);
  std::vector<std::vector<double>> args = {{0, 0}};
  try {
    interpret(rows_reduced_across_threads(true), args);
    FAIL() << "a reduction half the block reaches ran through";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "interpret: only 4 of the 8 threads of block 0 reach the reduction across threads into 'out'");
  }
}

}  // namespace
}  // namespace ansor
