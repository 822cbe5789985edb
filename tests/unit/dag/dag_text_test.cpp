// A ComputeDAG from its canonical text: the exact inverse of printing it for the DAG of every
// kernel in the repository's kernels.def files and of every built-in operator (same text, same
// workload key, and the same expression trees node by node, literal dtypes included), and
// errors with a line and column, never a crash, for malformed text.
#include "dag/dag_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "ir/printer.h"
#include "lang/program.h"
#include "lower/lower.h"
#include "records/record.h"
#include "schedule/state.h"
#include "source_file.h"
#include "test_support.h"

namespace ansor {
namespace {

// The first difference between two expressions, node by node (kinds, dtypes, values,
// operators); variables correspond by position, tensors by their canonical names. Empty when
// they are the same tree.
class TreeComparer {
 public:
  TreeComparer(std::map<const VarNode*, const VarNode*> vars, std::map<std::string, std::string> tensors)
      : vars_(std::move(vars)), tensors_(std::move(tensors)) {}

  std::string difference(const Expr& a, const Expr& b) {
    if (a->kind != b->kind) return fmt::format("kinds differ at '{}' and '{}'", to_string(a), to_string(b));
    if (a->dtype != b->dtype)
      return fmt::format("'{}' is {} but reads back as {}", to_string(a), dtype_name(a->dtype), dtype_name(b->dtype));
    switch (a->kind) {
      case ExprKind::IntImm:
        return a->as<IntImmNode>()->value == b->as<IntImmNode>()->value ? "" : "integer values differ at " + to_string(a);
      case ExprKind::FloatImm: {
        double x = a->as<FloatImmNode>()->value, y = b->as<FloatImmNode>()->value;
        bool same = (x == y && std::signbit(x) == std::signbit(y)) || (std::isnan(x) && std::isnan(y));
        return same ? "" : "float values differ at " + to_string(a);
      }
      case ExprKind::Var: {
        auto it = vars_.find(a->as<VarNode>());
        return it != vars_.end() && it->second == b.get() ? "" : "variables differ at " + to_string(a);
      }
      case ExprKind::Load: {
        auto *x = a->as<LoadNode>(), *y = b->as<LoadNode>();
        if (tensors_.at(x->tensor) != y->tensor) return "tensors differ at " + to_string(a);
        return all(x->indices, y->indices);
      }
      case ExprKind::Unary: {
        auto *x = a->as<UnaryNode>(), *y = b->as<UnaryNode>();
        return x->op != y->op ? "unary operators differ at " + to_string(a) : difference(x->operand, y->operand);
      }
      case ExprKind::Binary: {
        auto *x = a->as<BinaryNode>(), *y = b->as<BinaryNode>();
        if (x->op != y->op) return "binary operators differ at " + to_string(a);
        return all({x->a, x->b}, {y->a, y->b});
      }
      case ExprKind::Select: {
        auto *x = a->as<SelectNode>(), *y = b->as<SelectNode>();
        return all({x->cond, x->true_value, x->false_value}, {y->cond, y->true_value, y->false_value});
      }
      case ExprKind::Call: {
        auto *x = a->as<CallNode>(), *y = b->as<CallNode>();
        return x->fn != y->fn ? "functions differ at " + to_string(a) : all(x->args, y->args);
      }
      case ExprKind::Cast:
        return difference(a->as<CastNode>()->value, b->as<CastNode>()->value);
      case ExprKind::Reduce: {
        auto *x = a->as<ReduceNode>(), *y = b->as<ReduceNode>();
        if (x->op != y->op || x->axes.size() != y->axes.size() || (x->condition == nullptr) != (y->condition == nullptr))
          return "reductions differ at " + to_string(a);
        for (size_t i = 0; i < x->axes.size(); ++i) {
          if (x->axes[i].extent != y->axes[i].extent) return "reduction extents differ at " + to_string(a);
          vars_[x->axes[i].var.get()] = y->axes[i].var.get();
        }
        if (std::string d = difference(x->source, y->source); !d.empty()) return d;
        return x->condition ? difference(x->condition, y->condition) : "";
      }
    }
    return "unknown kind";
  }

 private:
  std::string all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return "operand counts differ";
    for (size_t i = 0; i < a.size(); ++i)
      if (std::string d = difference(a[i], b[i]); !d.empty()) return d;
    return "";
  }

  std::map<const VarNode*, const VarNode*> vars_;
  std::map<std::string, std::string> tensors_;
};

// Parses the DAG's canonical text and checks that it gives the same DAG back.
void expect_round_trip(const ComputeDAG& original, const std::string& what) {
  SCOPED_TRACE(what);
  const std::string& text = original.canonical_text();
  ComputeDAG parsed;
  try {
    parsed = parse_canonical_dag(text);
  } catch (const CompileError& e) {
    FAIL() << e.render() << "\nin\n" << text;
  }
  EXPECT_EQ(parsed.canonical_text(), text);
  EXPECT_EQ(parsed.workload_key(), original.workload_key());
  EXPECT_EQ(parsed.inputs(), original.inputs());
  EXPECT_EQ(parsed.outputs(), original.outputs());
  EXPECT_DOUBLE_EQ(parsed.flop_count(), original.flop_count());
  ASSERT_EQ(parsed.num_ops(), original.num_ops());
  std::map<std::string, std::string> tensors;
  for (int i = 0; i < original.num_ops(); ++i) tensors[original.op(i).name] = "T" + std::to_string(i);
  for (int i = 0; i < original.num_ops(); ++i) {
    const Operation& a = original.op(i);
    const Operation& b = parsed.op(i);
    EXPECT_EQ(b.name, "T" + std::to_string(i));
    EXPECT_EQ(a.kind, b.kind) << a.name;
    EXPECT_EQ(a.dtype, b.dtype) << a.name;
    EXPECT_EQ(a.shape, b.shape) << a.name;
    EXPECT_EQ(a.is_const, b.is_const) << a.name;
    ASSERT_EQ(a.axes.size(), b.axes.size()) << a.name;
    if (a.is_placeholder()) continue;
    std::map<const VarNode*, const VarNode*> vars;
    for (size_t d = 0; d < a.axes.size(); ++d) {
      EXPECT_EQ(a.axes[d].extent, b.axes[d].extent);
      EXPECT_EQ(a.axes[d].var->dtype, b.axes[d].var->dtype);
      vars[a.axes[d].var.get()] = b.axes[d].var.get();
    }
    EXPECT_EQ(TreeComparer(vars, tensors).difference(a.body, b.body), "") << "operation " << a.name << " (T" << i << ")";
  }
}

void expect_round_trips(const std::string& def_text, const std::string& what) {
  Program program = test::parse(def_text, what);
  ASSERT_FALSE(program.kernels.empty()) << what;
  for (const Kernel& k : program.kernels) expect_round_trip(k.dag, what + ": kernel " + k.name);
}

TEST(DagTextTest, RoundTripsEveryKernelOfTheRepository) {
  for (const char* path : {"kernels.def", "tests/kernels/kernels.def", "tests/integration/consumer/kernels.def"})
    expect_round_trips(test::read_source(path), path);
  // The seeds of the front end's fuzzer that are kernels (others are errors on purpose).
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ANSOR_SOURCE_DIR) + "/tests/fuzz/corpus")) {
    std::string name = entry.path().filename().string();
    Program program;
    try {
      program = test::parse(test::read_source("tests/fuzz/corpus/" + name), name);
    } catch (const CompileError&) {
      continue;
    }
    for (const Kernel& k : program.kernels) expect_round_trip(k.dag, name + ": kernel " + k.name);
    ++files;
  }
  EXPECT_GE(files, 8);
  // The benchmarks' kernels (bench/bench_support.h holds them as a raw string).
  std::string bench = test::read_source("bench/bench_support.h");
  size_t begin = bench.find("kPaperKernels = R\"(");
  ASSERT_NE(begin, std::string::npos);
  begin = bench.find('(', begin) + 1;
  expect_round_trips(bench.substr(begin, bench.find(")\";", begin) - begin), "bench/bench_support.h");
}

TEST(DagTextTest, RoundTripsEveryBuiltinOperator) {
  expect_round_trips(R"(
kernel linear_algebra {
  A = input f32[8, 6]
  B = const f32[6, 5]
  Bt = const f32[5, 6]
  X = input f32[2, 8, 6]
  Y = input f32[2, 6, 5]
  b = const f32[5]
  M = matmul(A, B)
  D = bias_add(dense(A, Bt), b, axis = 1)
  BM = batch_matmul(X, Y)
}
kernel convolutions {
  X1 = input f32[1, 4, 16]
  W1 = const f32[8, 4, 3]
  X2 = input f32[1, 4, 10, 10]
  W2 = const f32[8, 2, 3, 3]
  WD = const f32[4, 1, 3, 3]
  WT = const f32[4, 8, 3, 3]
  XH = input f32[1, 10, 10, 4]
  WH = const f32[3, 3, 4, 8]
  X3 = input f32[1, 2, 6, 6, 6]
  W3 = const f32[4, 2, 3, 3, 3]
  C1 = conv1d_ncw(X1, W1, stride = 2, pad = 1, dilation = 1)
  C2 = conv2d_nchw(X2, W2, stride = [1, 2], pad = [1, 0, 1, 2], dilation = 2, groups = 2)
  CD = depthwise_conv2d_nchw(X2, WD, stride = 2, pad = 1)
  CT = conv2d_transpose_nchw(X2, WT, stride = 2, pad = 1, output_pad = 1)
  CH = conv2d_nhwc(XH, WH, stride = 1, pad = 1)
  C3 = conv3d_ncdhw(X3, W3, pad = 1)
}
kernel pooling_and_normalization {
  X = input f32[1, 4, 9, 9]
  g = const f32[4]
  b = const f32[4]
  m = const f32[4]
  v = const f32[4]
  R = input f32[6, 10]
  gr = const f32[10]
  br = const f32[10]
  MP = max_pool2d(X, size = 3, stride = 2, pad = 1)
  AP = avg_pool2d(X, size = [2, 3], stride = 1, pad = [0, 1])
  BN = batch_norm(X, m, v, g, b, eps = 1e-3)
  SM = softmax(R, axis = -1)
  LN = layer_norm(R, gr, br, axis = -1, eps = 1e-5)
}
kernel elementwise_and_layout {
  X = input f32[4, 6]
  Y = input f32[4, 6]
  I = input i32[4, 6]
  H = input f16[4, 6]
  E = exp(X) + log(abs(Y) + 1.0) + sqrt(abs(X)) * rsqrt(abs(Y) + 2.0) + tanh(X) - sigmoid(Y) + erf(X)
  F = floor(X) + ceil(Y) + pow(abs(X), 1.5) + relu(X) + gelu(Y) + max(X, Y) - min(X, 0.5)
  S = select(X > Y, X, -Y)
  C = f32(I) + f32(H) + f32(relu(I)) + f32(abs(I))
  T = transpose(reshape(X, shape = [6, 4]), perm = [1, 0])
  Z = f64(X) * 2.0
  Ints = i32(bool(I)) + i32(u8(I)) + i32(i16(I)) + i32(i64(I)) + i32(i8(I))
  Halves = f32(bf16(X)) + f32(f16(X))
}
)",
                     "builtins.def");
}

// What training on the cache needs: every record of the repository's cache rebuilds its
// workload's DAG from the record alone, and the record's schedule replays and lowers on it.
TEST(DagTextTest, RebuildsAndReplaysEveryRecordOfTheRepositoryCache) {
  std::map<std::string, std::shared_ptr<const ComputeDAG>> dags;
  int records = 0, lowered = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ANSOR_SOURCE_DIR) + "/cache")) {
    if (entry.path().extension() != ".jsonl") continue;  // a build's cost model file (git ignores it)
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      // Under sanitizers a fourth of them: the code paths are the same, and the Release stage
      // checks every record.
      if (test::kSanitizedBuild && number % 4 != 1) continue;
      SCOPED_TRACE(entry.path().filename().string() + ":" + std::to_string(number));
      Record r = record_from_line(line);
      ++records;
      auto [it, fresh] = dags.try_emplace(r.workload_key);
      if (fresh) {
        it->second = std::make_shared<const ComputeDAG>(parse_canonical_dag(r.dag));
        ASSERT_EQ(it->second->workload_key(), r.workload_key);
      }
      if (!r.ok()) continue;
      State state = replay(it->second, r.steps);
      EXPECT_FALSE(lower_state(state, "k").body == nullptr);
      ++lowered;
    }
  }
  EXPECT_GE(records, test::kSanitizedBuild ? 25 : 100);
  std::printf("%d records of %zu workloads, %d replayed and lowered\n", records, dags.size(), lowered);
}

// Literals take their dtype from context; where the context decides nothing, kernels.def keeps
// them weak (i64, f64), as the reader assumes.
TEST(DagTextTest, RoundTripsLiteralsOfEveryContext) {
  expect_round_trips(R"(
kernel literals {
  X = input f32[4]
  H = input f16[4]
  I = input i32[4]
  B = input bool[4]
  Y[i:4] = select(1.5 < 2.5, X[i], -0.0) + select(2 > i, 1e-30, -3.5e+20) + f32(i32(2.5))
  Z[i:4] = select(B[i] && !(I[i] == -7), H[i] * 3.0, -H[i]) + f16(i % 3 - 1)
  L = input i64[4]
  W[i:4] = I[i] * -2 + I[i] - 2147483647 + i32(i) - 1 + i32(4294967301)
  V[i:4] = L[i] - 9223372036854775807 + i64(i8(200))
  M[i:4] = max(r:4, X[(i + r) % 4]) + sum(k:4, X[k] * 2.0) + min(a:2, b:2, X[a + b] - 1.0) * prod(p:3, 0.5 + X[p])
}
)",
                     "literals.def");
}

// Conditional reductions (which rfactor of a ragged split makes; kernels.def cannot write them)
// and scalars.
// What the canonical text does not hold: the dtype of a float literal, or of an expression of
// float literals alone, where no operand gives it one (compared with another such expression,
// or converted by a cast). kernels.def folds `f32(1.5)` into an f32 literal; the text prints
// `1.5`, which reads back as f64. Same text, same key; the literal's dtype differs.
TEST(DagTextTest, FloatLiteralsWithoutContextReadBackAsF64) {
  Program program =
      test::parse("kernel k { X = input f32[4]\n Y[i:4] = select(f32(1.5) < 2.5, X[i], 0.0) + f32(i32(f16(2.5))) }");
  const ComputeDAG& original = program.kernels[0].dag;
  ComputeDAG parsed = parse_canonical_dag(original.canonical_text());
  EXPECT_EQ(parsed.workload_key(), original.workload_key());
  auto literal_dtypes = [](const ComputeDAG& dag) {
    std::vector<DType> dtypes;
    visit_pre_order(dag.op(1).body, [&](const Expr& e) {
      if (e->kind == ExprKind::FloatImm) dtypes.push_back(e->dtype);
      return true;
    });
    return dtypes;
  };
  // 1.5 and 2.5 of the comparison, the select's 0.0 (typed by X[i]), 2.5 of the cast.
  EXPECT_EQ(literal_dtypes(original), (std::vector<DType>{DType::F32, DType::F32, DType::F32, DType::F16}));
  EXPECT_EQ(literal_dtypes(parsed), (std::vector<DType>{DType::F64, DType::F64, DType::F32, DType::F64}));
}

TEST(DagTextTest, RoundTripsConditionalReductionsAndScalars) {
  OpPtr x = make_placeholder("X", DType::F32, {8}, false);
  OpPtr s = make_placeholder("S", DType::F64, {}, true);
  Var i = make_var("i"), k = make_var("k");
  Expr masked = reduce(ReduceOp::Sum, {{k, 8}}, load("X", DType::F32, {k}), logical_and(lt(k, add(i, 3)), ge(k, i)));
  OpPtr y = make_compute("Y", {{i, 4}}, add(masked, cast(DType::F32, load("S", DType::F64, {}))));
  Var j = make_var("j");
  OpPtr total = make_compute("Total", {}, reduce(ReduceOp::Max, {{j, 4}}, load("Y", DType::F32, {j})));
  expect_round_trip(ComputeDAG({x, s, y, total}), "built in C++");
  EXPECT_EQ(
      ComputeDAG({x, s, y, total}).canonical_text(),
      "T0 = input f32[8]\nT1 = const f64[]\nT2[i0:4] = f32(sum(r0:8, T0[r0], where = r0 < i0 + 3 && r0 >= i0) + f32(T1[]))\n"
      "T3[] = f32(max(r0:4, T2[r0]))\noutputs T3\n");
}

// `file:line:col: error: message`, with the source line and a caret.
std::string error_of(const std::string& text) {
  try {
    parse_canonical_dag(text, "dag");
  } catch (const CompileError& e) {
    std::string rendered = e.render();
    return rendered.substr(0, rendered.find('\n'));
  }
  return "no error";
}

TEST(DagTextTest, MalformedTextIsAnErrorWithLineAndColumn) {
  const std::string matmul =
      "T0 = input f32[4, 6]\nT1 = const f32[6, 5]\nT2[i0:4, i1:5] = f32(sum(r0:6, T0[i0, r0] * T1[r0, i1]))\noutputs T2\n";
  ASSERT_EQ(error_of(matmul), "no error");
  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {"", "dag:1:1: error: expected 'T0' or 'outputs', found the end of the text"},
      {"T1 = input f32[4]\noutputs T1\n", "dag:1:1: error: expected 'T0' or 'outputs', found 'T1'"},
      {"T0 = output f32[4]\noutputs T0\n", "dag:1:6: error: expected 'input' or 'const', found 'output'"},
      {"T0 = input f31[4]\noutputs T0\n", "dag:1:12: error: expected a dtype, found 'f31'"},
      {"T0 = input f32[0]\noutputs\n", "dag:1:16: error: extent 0 is out of range [1, 1099511627776]"},
      {"T0 = input f32[4\noutputs\n", "dag:1:17: error: expected ',', found the end of the line"},
      {"T0 = input f32[1099511627776, 2]\noutputs\n", "dag:1:31: error: 'T0' has more than 1099511627776 elements"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T2[i0])\noutputs T1\n", "dag:2:16: error: 'T2' is not a tensor defined above"},
      {"T0 = input f32[4]\nT1[i1:4] = f32(T0[i1])\noutputs T1\n", "dag:2:4: error: expected axis 'i0', found 'i1'"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0, i0])\noutputs T1\n", "dag:2:16: error: 'T0' has 1 dimensions, indexed by 2"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] + r0)\noutputs T1\n", "dag:2:25: error: 'r0' is not a variable in scope"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] + 1)\noutputs T1\n",
       "dag:2:25: error: an integer literal where f32 is expected"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] + i0)\noutputs T1\n", "dag:2:25: error: an operand of '+' must be f32, not i64"},
      {"T0 = input f32[4]\nT1[i0:4] = f64(T0[i0])\noutputs T1\n", "dag:2:12: error: 'T1' is declared f64 but its value is f32"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(select(T0[i0], 1.0, 2.0))\noutputs T1\n",
       "dag:2:23: error: the condition of 'select' must be bool, not f32"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(exp(T0[i0], 2.0))\noutputs T1\n", "dag:2:16: error: 'exp' takes 1 argument, given 2"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(foo(T0[i0]))\noutputs T1\n", "dag:2:16: error: unknown function 'foo'"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(sum(r1:4, T0[r1]))\noutputs T1\n",
       "dag:2:20: error: expected reduction variable 'r0', found 'r1'"},
      {"T0 = input f32[4]\nT1[] = f32(sum(r0:4, T0[r0], when = r0 < 2))\noutputs T1\n",
       "dag:2:30: error: expected 'where', found 'when'"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] $ 2.0)\noutputs T1\n", "dag:2:23: error: unexpected character '$'"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] * 1e)\noutputs T1\n", "dag:2:26: error: malformed exponent"},
      {"T0 = input i64[4]\nT1[i0:4] = i64(T0[i0] + 9223372036854775808)\noutputs T1\n",
       "dag:2:25: error: integer 9223372036854775808 is out of range"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0])\noutputs T0\n",
       "dag:3:1: error: the outputs are T1 (the operations no other reads), not T0"},
      {"T0 = input f32[4]\nT1[i0:4] = f32(T0[i0])\noutputs T1\nT2 = input f32[4]\n",
       "dag:4:1: error: expected the end of the text after the outputs, found 'T2'"},
      {"T0 = input f32[4]\r\noutputs\r\n", "dag:1:18: error: unexpected character '\\x0d'"},
      // Well-formed but not canonical: it would hash to another workload key.
      {"T0 = input f32[4]\nT1[i0:4] = f32((T0[i0]))\noutputs T1\n",
       "dag:2:16: error: not in canonical form; the canonical line is 'T1[i0:4] = f32(T0[i0])'"},
      {"T0  = input f32[4]\noutputs \n", "dag:1:4: error: not in canonical form; the canonical line is 'T0 = input f32[4]'"},
      {"T0 = input f32[4]\noutputs ", "dag:2:9: error: expected a tensor, found the end of the text"},
  };
  for (const Case& c : cases) EXPECT_EQ(error_of(c.text), c.error) << c.text;
}

TEST(DagTextTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "T0 = input f32[4]\nT1[i0:4] = f32(" + std::string(100000, '(') + "T0[i0]" + std::string(100000, ')') + ")\noutputs T1\n";
  EXPECT_EQ(error_of(deep), "dag:2:516: error: expression nested deeper than 500");
  std::string chain = "T0 = input f32[4]\nT1[i0:4] = f32(T0[i0]";
  for (int i = 0; i < 100000; ++i) chain += " + T0[i0]";
  EXPECT_NE(error_of(chain + ")\noutputs T1\n").find("error: expression nested deeper than 500"), std::string::npos);
}

// Truncated and corrupted canonical texts: each is parsed or refused with a CompileError.
TEST(DagTextTest, CorruptedTextNeverCrashes) {
  Program program = test::parse(test::read_source("tests/kernels/kernels.def"), "kernels.def");
  std::mt19937_64 rng(11);
  const std::string alphabet = "T0123456789ir[](),:=+-*/%<>!&|. \nabcdefhlmnopstuwxyz";
  int parsed = 0, refused = 0;
  for (const Kernel& k : program.kernels) {
    const std::string& text = k.dag.canonical_text();
    for (int trial = 0; trial < 40; ++trial) {
      std::string corrupt = text;
      std::uniform_int_distribution<size_t> pos(0, corrupt.size() - 1);
      switch (trial % 4) {
        case 0:
          corrupt.resize(pos(rng));
          break;
        case 1:
          corrupt[pos(rng)] = alphabet[rng() % alphabet.size()];
          break;
        case 2:
          corrupt.erase(pos(rng), 1 + rng() % 8);
          break;
        default:
          corrupt.insert(pos(rng), 1, alphabet[rng() % alphabet.size()]);
          break;
      }
      try {
        ComputeDAG dag = parse_canonical_dag(corrupt);
        EXPECT_EQ(dag.canonical_text(), corrupt);
        ++parsed;
      } catch (const CompileError& e) {
        EXPECT_TRUE(e.loc().valid()) << e.message();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  std::printf("corrupted texts: %d parsed, %d refused\n", parsed, refused);
}

}  // namespace
}  // namespace ansor
