// Which other targets' records serve this one.
#include "tune/record_travel.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "target/target.h"

namespace ansor {

std::vector<std::string> related_targets(const TuningCache& cache, const std::string& target) {
  Target self;
  try {
    self = parse_target(target);
  } catch (const std::invalid_argument&) {
    return {};
  }
  std::vector<std::pair<Target, std::string>> related;
  for (const std::string& other : cache.targets()) {
    if (other == target) continue;
    try {
      Target t = parse_target(other);
      if (t.same_isa(self)) related.push_back({t, other});
    } catch (const std::invalid_argument&) {
      // Written by a newer generator, or hand-edited: not ours to judge.
    }
  }
  auto rank = [&](const std::pair<Target, std::string>& r) {
    return std::make_tuple(r.first.cpu != self.cpu, r.first.threads != self.threads, r.second);
  };
  std::sort(related.begin(), related.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  std::vector<std::string> out;
  for (auto& r : related) out.push_back(r.second);
  return out;
}

}  // namespace ansor
