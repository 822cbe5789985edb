// A State as nested loops, before lowering: what sketches look like (split lengths still
// undecided print as `?`), and a compact view of any schedule.
#pragma once

#include <string>

#include "schedule/state.h"

namespace ansor {

std::string state_to_string(const State& state);

}  // namespace ansor
