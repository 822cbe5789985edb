// Records travel between machines: a cache committed on one machine, or tuned by a colleague or
// by CI, holds records of other targets. Those of the same vector ISA (another CPU model or
// thread count) replay here, so they serve a kernel that has no record of this target yet, and
// they teach the cost model; the exact target's records always win.
#pragma once

#include <string>
#include <vector>

#include "records/cache.h"

namespace ansor {

// The cache's targets other than `target` with the same ISA, most alike first: the same CPU
// model (another thread count), then the same thread count, then the rest, each by name. A
// target string that does not parse is left out.
std::vector<std::string> related_targets(const TuningCache& cache, const std::string& target);

}  // namespace ansor
