// Node-based crossover: children of parents from the same sketch lower and compute what the
// naive program computes, on CPUs and GPUs; each node of a child has every step of one parent
// (its stages' steps, in that parent's order), both parents give some node, and the rule's
// rejections hold (different sketches, a kernel of one node).
#include "sampler/crossover.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "program_reference.h"
#include "sampler/annotation.h"
#include "sampler/program_builder.h"
#include "test_support.h"

namespace ansor {
namespace {

struct Family {
  std::shared_ptr<const ComputeDAG> dag;
  std::shared_ptr<const SketchCatalog> catalog;
  std::vector<State> programs;
  std::vector<int> sketch_of;
};

Family sample_family(const std::string& kernel, const SamplerContext& ctx, int count, uint64_t seed) {
  Family f;
  f.dag = test::dag_of(test::parse(test::kOperatorKernels, "crossover_test.def"), kernel);
  f.catalog = std::make_shared<const SketchCatalog>(generate_sketches(f.dag, ctx, SketchRules::for_context(ctx)));
  Annotator annotator(ctx);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    f.programs.push_back(sample_program(f.catalog->sketches(), annotator, rng));
    f.sketch_of.push_back(f.catalog->match(f.programs.back()).sketch);
  }
  return f;
}

// Pairs of programs of the same sketch.
std::vector<std::pair<int, int>> same_sketch_pairs(const Family& f, size_t limit) {
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i < f.programs.size(); ++i)
    for (size_t j = i + 1; j < f.programs.size() && pairs.size() < limit; ++j)
      if (f.sketch_of[i] == f.sketch_of[j]) pairs.push_back({static_cast<int>(i), static_cast<int>(j)});
  return pairs;
}

// Per node, per stage: the steps (as JSON text) in order.
using NodeSteps = std::map<int, std::map<int, std::vector<std::string>>>;

NodeSteps steps_by_node(const State& program) {
  NodeSteps out;
  std::vector<int> nodes = step_nodes(program);
  for (size_t k = 0; k < program.steps().size(); ++k)
    out[nodes[k]][program.steps()[k]->stage].push_back(program.steps()[k]->to_json().dump());
  return out;
}

TEST(CrossoverTest, ChildrenComputeTheReference) {
  SamplerContext ctx;
  int children = 0;
  for (const char* kernel : {"conv_bias_relu", "softmax", "layer_norm", "bias_gelu", "row_norm", "two_layers"}) {
    Family f = sample_family(kernel, ctx, 30, 1);
    test::ProgramReference reference(f.dag);
    Crossover crossover(ctx, f.catalog);
    std::mt19937_64 rng(2);
    int made = 0;
    for (auto [i, j] : same_sketch_pairs(f, 40)) {
      std::optional<State> child = crossover.cross(f.programs[i], f.programs[j], rng);
      if (!child) continue;
      ++made;
      EXPECT_TRUE(reference.matches(*child)) << kernel << "\nparents:\n"
                                             << describe_steps(f.programs[i]) << "\n"
                                             << describe_steps(f.programs[j]);
    }
    // bias_gelu and row_norm have one node with steps of their own once the rest is inlined.
    if (std::string(kernel) != "row_norm" && std::string(kernel) != "bias_gelu") {
      EXPECT_GT(made, 5) << kernel;
    }
    children += made;
  }
  EXPECT_GT(children, 60);
}

TEST(CrossoverTest, EachNodeHasTheStepsOfOneParentAndBothParentsGiveSome) {
  SamplerContext ctx;
  int checked = 0;
  for (const char* kernel : {"conv_bias_relu", "softmax", "layer_norm", "two_layers"}) {
    Family f = sample_family(kernel, ctx, 30, 3);
    Crossover crossover(ctx, f.catalog);
    std::mt19937_64 rng(4);
    for (auto [i, j] : same_sketch_pairs(f, 40)) {
      std::optional<State> child = crossover.cross(f.programs[i], f.programs[j], rng);
      if (!child) continue;
      NodeSteps a = steps_by_node(f.programs[i]), b = steps_by_node(f.programs[j]), c = steps_by_node(*child);
      bool used_a = false, used_b = false;
      std::set<int> nodes;
      for (const NodeSteps* x : {&a, &b, &c})
        for (const auto& [node, stages] : *x) nodes.insert(node);
      for (int node : nodes) {
        bool from_a = c[node] == a[node], from_b = c[node] == b[node];
        EXPECT_TRUE(from_a || from_b) << kernel << ": node " << f.dag->op(node).name << " of neither parent\n"
                                      << describe_steps(*child);
        used_a = used_a || (from_a && !from_b);
        used_b = used_b || (from_b && !from_a);
      }
      EXPECT_TRUE(used_a && used_b) << kernel;
      EXPECT_NE(child->signature(), f.programs[i].signature());
      EXPECT_NE(child->signature(), f.programs[j].signature());
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(CrossoverTest, StepNodesGroupDerivedStagesWithTheirNode) {
  SamplerContext ctx;
  Family f = sample_family("matmul", ctx, 20, 5);
  const int c = f.dag->num_ops() - 1;
  ASSERT_EQ(f.dag->op(c).name, "C");
  int with_cache = 0;
  for (const State& program : f.programs) {
    std::vector<int> nodes = step_nodes(program);
    State replaying(f.dag);
    for (size_t k = 0; k < program.steps().size(); ++k) {
      const std::string& stage = replaying.stage(program.steps()[k]->stage).op->name;
      if (stage == "C" || stage == "C.local") {
        EXPECT_EQ(nodes[k], c) << stage;
      } else if (stage == "B") {
        EXPECT_EQ(nodes[k], 1);
      }
      with_cache += stage == "C.local";
      replaying.apply(program.steps()[k]);
    }
  }
  EXPECT_GT(with_cache, 0);
}

TEST(CrossoverTest, RejectsParentsOfDifferentSketchesAndKernelsOfOneNode) {
  SamplerContext ctx;
  Family conv = sample_family("conv_bias_relu", ctx, 30, 6);
  Crossover crossover(ctx, conv.catalog);
  std::mt19937_64 rng(7);
  int different = 0;
  for (size_t j = 1; j < conv.programs.size(); ++j) {
    if (conv.sketch_of[j] == conv.sketch_of[0]) continue;
    EXPECT_FALSE(crossover.cross(conv.programs[0], conv.programs[j], rng));
    ++different;
  }
  EXPECT_GT(different, 0);
  // A matmul's steps all belong to its one node (and its const input's, the same in all).
  Family matmul = sample_family("matmul", ctx, 20, 8);
  Crossover of_matmul(ctx, matmul.catalog);
  int pairs = 0;
  for (auto [i, j] : same_sketch_pairs(matmul, 30)) {
    EXPECT_FALSE(of_matmul.cross(matmul.programs[i], matmul.programs[j], rng));
    ++pairs;
  }
  EXPECT_GT(pairs, 10);
}

TEST(CrossoverTest, GpuChildrenComputeTheReferenceWithinTheThreadLimits) {
  SamplerContext ctx;
  ctx.gpu = true;
  int made = 0;
  for (const char* kernel : {"conv_bias_relu", "softmax", "two_layers"}) {
    Family f = sample_family(kernel, ctx, 16, 9);
    test::ProgramReference reference(f.dag);
    Crossover crossover(ctx, f.catalog);
    std::mt19937_64 rng(10);
    for (auto [i, j] : same_sketch_pairs(f, 12)) {
      std::optional<State> child = crossover.cross(f.programs[i], f.programs[j], rng);
      if (!child) continue;
      ++made;
      EXPECT_TRUE(within_gpu_limits(*child, ctx));
      EXPECT_TRUE(reference.matches(*child)) << kernel;
    }
  }
  EXPECT_GT(made, 5);
}

}  // namespace
}  // namespace ansor
