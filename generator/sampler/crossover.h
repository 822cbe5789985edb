// Node-based crossover (paper §5.1): a child program takes, for every node of the DAG, the
// steps of one of two parents. TVM's Ansor describes it but never implemented it.
//
// The rule:
//   - Both parents must be annotated from the same sketch (SketchCatalog::match): their steps
//     then begin with the same structural steps, which differ only in the split lengths that
//     the sketch left open, and the stages are the same stages at the same indices in both.
//     Parents from different sketches, or whose sketch is not in the catalog, are rejected.
//   - Every step belongs to a node (step_nodes): the operation of the DAG whose stage it works
//     on. Stages that the sketch derived from a node belong to it: the stage that cache_write
//     or rfactor splits off, and a cache_read's copy, which belongs to the node reading it (its
//     tile and threads are that reader's).
//   - The child's sketch steps are taken one by one from the parent chosen for their node (so
//     a node's tile sizes come from one parent; follow_split steps name a step by its index,
//     which is the same in both parents, and follow whichever parent's split the child has).
//     Its annotation steps are each chosen parent's annotation steps of the node: compute
//     locations first, then the others, stages from the last to the first, each stage's steps
//     in their parent's order, as the annotator orders them (consumers are bound to GPU
//     threads before the copies they read).
//   - Only nodes whose steps differ between the parents are drawn, and both parents give at
//     least one of them: a child that would repeat a parent is not made (nor one whose loops
//     come out the same as a parent's).
//   - Repair: when a node's step does not apply on top of the others' (a compute_at into a
//     consumer that the other parent inlined, say), the node is taken from the other parent
//     and the child is rebuilt; a second failure of that node rejects the child, as does a
//     child that fails ProgramBuilder::finish (bound inference, GPU thread limits).
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "sampler/sampler_context.h"
#include "sampler/sketch_catalog.h"

namespace ansor {

// The node (index of the DAG's operation) that each step of the program works on, by the rule
// above.
std::vector<int> step_nodes(const State& program);

class Crossover {
 public:
  Crossover(SamplerContext ctx, std::shared_ptr<const SketchCatalog> catalog) : ctx_(std::move(ctx)), catalog_(std::move(catalog)) {}

  // A child of the two parents, or nothing when the rule rejects them or the child.
  std::optional<State> cross(const State& a, const State& b, std::mt19937_64& rng) const;

 private:
  SamplerContext ctx_;
  std::shared_ptr<const SketchCatalog> catalog_;
};

}  // namespace ansor
