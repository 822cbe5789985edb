// Tile sizes: the ways to split a loop of a given extent into parts whose lengths multiply to
// the extent, each drawn uniformly, and the ragged splits that give a vectorised loop whole
// vectors of the target's width where its extent has no such divisor.
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

  // One split of `extent` into n inner lengths.
  //
  // For the loop a stage's vectors run along (`lanes` > 1: the target's vector width in
  // elements), the innermost length is always a whole number of vectors once the extent holds
  // one: an exact scheme where the extent has such divisors, otherwise a ragged one whose
  // innermost length is k * lanes and whose other lengths divide the number of such tiles
  // (rounded up a little where that buys divisors): the waste is the last tile's missing lanes,
  // which lowering masks.
  //
  // Other loops (`lanes` 0) get a scheme drawn uniformly; for an extent with few divisors (a
  // prime, say) the split is sometimes made ragged instead, from the schemes of the extent
  // rounded up to a multiple of 8, so that tiles of useful sizes stay reachable.
  std::vector<int64_t> sample(int64_t extent, int n, int64_t max_innermost, int64_t lanes, std::mt19937_64& rng);

 private:
  std::vector<int64_t> sample_vector_axis(int64_t extent, int n, int64_t max_innermost, int64_t lanes, std::mt19937_64& rng);
  std::vector<int64_t> sample_exact(int64_t extent, int n, int64_t max_innermost, std::mt19937_64& rng);

  std::map<std::tuple<int64_t, int, int64_t>, std::vector<std::vector<int64_t>>> memo_;
};

// The padded extent of a split: the iterations its loops run, ceil(extent / product) * product
// for the product of its inner lengths. Above `extent` the split is ragged.
int64_t padded_extent(int64_t extent, const std::vector<int64_t>& lengths);

}  // namespace ansor
