// The sketches of one task, with what mutation and crossover ask of them: which sketch a
// complete program was annotated from, which of the sketch's splits had their lengths left to
// annotation, and which of its stages had their compute location left open.
//
// A program's steps begin with its sketch's steps, the undecided split lengths filled in
// (Annotator::annotate); annotation only appends. Records keep the steps, so programs read back
// from the cache are matched the same way, as long as the derivation rules have not changed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "sampler/sketch_generator.h"

namespace ansor {

struct SketchMatch {
  int sketch = -1;    // index into the catalog's sketches; -1 when none begins the program
  size_t prefix = 0;  // the sketch's number of steps: the program's steps after it are annotation
  bool found() const { return sketch >= 0; }
};

class SketchCatalog {
 public:
  explicit SketchCatalog(std::vector<Sketch> sketches);

  const std::vector<Sketch>& sketches() const { return sketches_; }

  // The longest sketch whose steps begin the program's steps.
  SketchMatch match(const State& program) const;

  // Indices (into the sketch's steps) of the splits whose lengths annotation chooses, and the
  // extent of the loop each splits (0 where the sketch does not tell it).
  const std::vector<int>& open_splits(int sketch) const { return info_[sketch].open_splits; }
  const std::vector<int64_t>& open_split_extents(int sketch) const { return info_[sketch].open_split_extents; }
  // Whether each open split splits its stage's vector axis (splits_vector_axis).
  const std::vector<bool>& open_split_vector_axes(int sketch) const { return info_[sketch].open_split_vector_axes; }
  // Stages whose compute location annotation chooses: computed at the root, not tiled, not an
  // output of the kernel.
  const std::vector<int>& flexible_stages(int sketch) const { return info_[sketch].flexible_stages; }

 private:
  struct Info {
    std::vector<nlohmann::json> step_json;
    std::vector<int> open_splits;
    std::vector<int64_t> open_split_extents;
    std::vector<bool> open_split_vector_axes;
    std::vector<int> flexible_stages;
  };
  bool step_matches(int sketch, size_t index, const StepPtr& step) const;

  std::vector<Sketch> sketches_;
  std::vector<Info> info_;
};

}  // namespace ansor
