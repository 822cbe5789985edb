// Schedules mapped across the shapes of one computation.
#include "schedule/shape_transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "schedule/steps.h"

namespace ansor {

namespace {

// The divisor of n that is a multiple of `step` and at most `most` nearest to `length` by
// ratio, the larger on a tie; 0 where n has none.
int64_t nearest_divisor(int64_t n, int64_t length, int64_t step = 1, int64_t most = INT64_MAX) {
  int64_t best = 0;
  double best_distance = 0;
  auto consider = [&](int64_t d) {
    if (d % step != 0 || d > most) return;
    double distance = std::abs(std::log(static_cast<double>(d) / static_cast<double>(length)));
    if (best == 0 || distance < best_distance || (distance == best_distance && d > best)) best = d, best_distance = distance;
  };
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) consider(d), consider(n / d);
  return best;
}

}  // namespace

std::vector<int64_t> adapt_split_lengths(const std::vector<int64_t>& lengths, int64_t extent, SplitFit fit, int64_t whole_lanes) {
  if (extent < 1) return lengths;
  std::vector<int64_t> adapted = lengths;
  int64_t inside = 1;
  for (size_t i = adapted.size(); i-- > 0;) {
    if (adapted[i] == 0) continue;
    const bool whole_vectors = i + 1 == adapted.size() && whole_lanes > 1 && adapted[i] % whole_lanes == 0 && extent >= whole_lanes;
    if (whole_vectors) {
      // Never wider than the record's tile: its register tile was chosen for that many lanes.
      const int64_t divisor = fit == SplitFit::Divisors ? nearest_divisor(extent, adapted[i], whole_lanes, adapted[i]) : 0;
      adapted[i] = divisor > 0 ? divisor : std::max<int64_t>(whole_lanes, std::min(adapted[i], extent / whole_lanes * whole_lanes));
    } else if (fit == SplitFit::KeepInner) {
      adapted[i] = std::clamp<int64_t>(extent / inside, 1, adapted[i]);
    } else {
      adapted[i] = nearest_divisor(extent / inside, adapted[i]);
    }
    inside *= adapted[i];
  }
  return adapted;
}

std::optional<State> map_schedule(const std::vector<StepPtr>& steps, const std::shared_ptr<const ComputeDAG>& dag, SplitFit fit,
                                  std::string& why, int64_t vector_lanes) {
  State state(dag);
  for (size_t i = 0; i < steps.size(); ++i) {
    StepPtr step = steps[i];
    if (auto* split = dynamic_cast<const SplitStep*>(step.get()); split && split->stage >= 0 && split->stage < state.num_stages()) {
      const Stage& stage = state.stage(split->stage);
      if (split->iter >= 0 && split->iter < static_cast<int>(stage.leaves.size())) {
        const bool vector_axis = stage.num_spatial_roots() > 0 && stage.leaves[split->iter] == stage.num_spatial_roots() - 1;
        std::vector<int64_t> lengths =
            adapt_split_lengths(split->lengths, stage.iters[stage.leaves[split->iter]].extent, fit, vector_axis ? vector_lanes : 0);
        if (lengths != split->lengths) step = std::make_shared<SplitStep>(split->stage, split->iter, std::move(lengths));
      }
    }
    try {
      state.apply(step);
    } catch (const StepError& e) {
      why = fmt::format("step {} ({}) does not apply: {}", i, step_kind_name(step->kind()), e.what());
      return std::nullopt;
    }
  }
  return state;
}

}  // namespace ansor
