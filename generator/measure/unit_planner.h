// How many candidates go into one translation unit (one compiler run, one shared library).
// Larger units pay the compiler's start-up once for more candidates; smaller ones keep every
// compiler slot busy to the end of a batch, and a slow candidate (or one that fails and is
// compiled again alone) holds fewer others back. The planner learns from the compile times it is
// shown what one candidate costs, and picks the size from that.
#pragma once

#include <cstddef>

namespace ansor {

struct UnitPlannerOptions {
  double startup_seconds = 0.15;       // a compiler run with nothing to compile (clang with the precompiled prelude)
  double max_startup_share = 0.1;      // units are large enough that start-up is at most this share of them
  double max_unit_seconds = 4;         // ... and small enough to compile in about this long
  int units_per_slot = 2;              // a batch makes at least this many units per compiler slot, to balance slots
  size_t first_per_unit = 2;           // before any compile time is known
};

class UnitPlanner {
 public:
  explicit UnitPlanner(UnitPlannerOptions options = {}) : options_(options) {}

  // Candidates per unit for a batch of `candidates` compiled `parallel` at a time: at least 1.
  size_t per_unit(size_t candidates, int parallel) const;

  // A unit of `members` candidates compiled successfully in `seconds`: updates the estimate of
  // one candidate's compile time (an average that follows recent units).
  void observe(size_t members, double seconds);

  // The estimate of one candidate's compile time, without start-up; 0 before any observation.
  double candidate_seconds() const { return candidate_seconds_; }
  // What a compiler run costs before its first candidate.
  double startup_seconds() const { return options_.startup_seconds; }

 private:
  UnitPlannerOptions options_;
  double candidate_seconds_ = 0;
};

}  // namespace ansor
