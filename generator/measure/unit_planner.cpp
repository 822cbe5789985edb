// Sizes of translation units from measured compile times.
#include "measure/unit_planner.h"

#include <algorithm>
#include <cmath>

namespace ansor {

namespace {

// How much a new unit's time moves the estimate: compile times drift as the search moves to
// other kinds of programs, so recent units count most.
constexpr double kNewObservationWeight = 0.3;

}  // namespace

size_t UnitPlanner::per_unit(size_t candidates, int parallel) const {
  size_t slots = static_cast<size_t>(std::max(1, parallel)) * static_cast<size_t>(std::max(1, options_.units_per_slot));
  // Enough units for every slot (and some to even out the slots), when the batch has them.
  size_t balanced = std::max<size_t>(1, candidates / slots);
  if (candidate_seconds_ <= 0) return std::clamp<size_t>(options_.first_per_unit, 1, balanced);
  double amortizing = std::ceil(options_.startup_seconds / (options_.max_startup_share * candidate_seconds_));
  double bounded = std::floor(options_.max_unit_seconds / candidate_seconds_);
  double size = std::max(1.0, std::min({amortizing, bounded, static_cast<double>(balanced)}));
  return static_cast<size_t>(size);
}

void UnitPlanner::observe(size_t members, double seconds) {
  if (members == 0 || !(seconds >= 0)) return;
  double per_candidate = std::max(0.0, seconds - options_.startup_seconds) / static_cast<double>(members);
  // A unit faster than its start-up still took time: never estimate a candidate as free.
  per_candidate = std::max(per_candidate, 1e-3);
  candidate_seconds_ =
      candidate_seconds_ <= 0 ? per_candidate : (1 - kNewObservationWeight) * candidate_seconds_ + kNewObservationWeight * per_candidate;
}

}  // namespace ansor
