// Tile sizes: the ways to split a loop of a given extent into parts whose lengths multiply to
// the extent, each drawn uniformly.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace ansor {

class Factorizations {
 public:
  // Every (l1, ..., ln) of positive lengths whose product divides `extent`, with the innermost
  // ln at most max_innermost: the inner lengths of an exact split (the outer part takes the
  // rest). Memoised.
  const std::vector<std::vector<int64_t>>& schemes(int64_t extent, int n, int64_t max_innermost);

  // One scheme drawn uniformly. For an extent with few divisors (a prime, say) the split is
  // sometimes made ragged instead, from the schemes of the extent rounded up to a multiple of
  // 8, so that tiles of useful sizes stay reachable.
  std::vector<int64_t> sample(int64_t extent, int n, int64_t max_innermost, std::mt19937_64& rng);

 private:
  std::map<std::tuple<int64_t, int, int64_t>, std::vector<std::vector<int64_t>>> memo_;
};

}  // namespace ansor
