// Sketch generation (paper §4.1): from the untransformed DAG, the derivation rules are applied
// stage by stage from the output back to the inputs; every way to reach the first stage is a
// sketch: the high-level structure of a program, with tile sizes still undecided.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sampler/sketch_rule.h"

namespace ansor {

struct Sketch {
  State state;
  std::vector<std::string> derivation;  // "rule@stage" in the order they applied
};

// Distinct sketches, at most max_sketches.
std::vector<Sketch> generate_sketches(const std::shared_ptr<const ComputeDAG>& dag, const SamplerContext& ctx, const SketchRules& rules,
                                      size_t max_sketches = 64);

}  // namespace ansor
