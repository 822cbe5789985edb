// Enumeration and sampling of split factorisations.
#include "sampler/factorization.h"

#include <algorithm>

#include "sampler/random_choice.h"

namespace ansor {

namespace {

// Schemes grow quickly with the number of divisors; beyond this, sampling falls back to
// drawing one divisor at a time.
constexpr size_t kMaxSchemes = 200000;

// A ragged vector tile wider than one vector is drawn only while the padding it adds stays
// under this share of the extent (one vector's tail is always allowed).
constexpr double kMaxWideTileWaste = 0.125;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d * d != n) large.insert(large.begin(), n / d);
  }
  small.insert(small.end(), large.begin(), large.end());
  return small;
}

void enumerate(int64_t rest, int n, int64_t max_innermost, std::vector<int64_t>& current, std::vector<std::vector<int64_t>>& out) {
  if (out.size() > kMaxSchemes) return;
  if (static_cast<int>(current.size()) == n) {
    out.push_back(current);
    return;
  }
  bool innermost = static_cast<int>(current.size()) == n - 1;
  for (int64_t d : divisors(rest)) {
    if (innermost && d > max_innermost) break;
    current.push_back(d);
    enumerate(rest / d, n, max_innermost, current, out);
    current.pop_back();
  }
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

}  // namespace

int64_t padded_extent(int64_t extent, const std::vector<int64_t>& lengths) {
  int64_t product = 1;
  for (int64_t l : lengths) product *= std::max<int64_t>(1, l);
  return round_up(std::max<int64_t>(1, extent), product);
}

const std::vector<std::vector<int64_t>>& Factorizations::schemes(int64_t extent, int n, int64_t max_innermost) {
  auto key = std::make_tuple(extent, n, max_innermost);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> current;
  enumerate(extent, n, max_innermost, current, out);
  if (out.size() > kMaxSchemes) out.clear();
  return memo_[key] = std::move(out);
}

std::vector<int64_t> Factorizations::sample_exact(int64_t extent, int n, int64_t max_innermost, std::mt19937_64& rng) {
  const auto& all = schemes(extent, n, max_innermost);
  if (!all.empty()) return pick(all, rng);
  // Too many schemes to list: one divisor of what is left at a time, innermost first.
  std::vector<int64_t> lengths(n, 1);
  int64_t rest = extent;
  for (int i = n - 1; i >= 0; --i) {
    std::vector<int64_t> ds = divisors(rest);
    if (i == n - 1)
      while (!ds.empty() && ds.back() > max_innermost) ds.pop_back();
    lengths[i] = pick(ds, rng);
    rest /= lengths[i];
  }
  return lengths;
}

std::vector<int64_t> Factorizations::sample_vector_axis(int64_t extent, int n, int64_t max_innermost, int64_t lanes,
                                                        std::mt19937_64& rng) {
  if (extent % lanes == 0) {
    // Exact schemes whose innermost length is whole vectors.
    std::vector<std::vector<int64_t>> whole;
    for (const auto& s : schemes(extent, n, max_innermost))
      if (s.back() % lanes == 0) whole.push_back(s);
    if (!whole.empty()) return pick(whole, rng);
    if (schemes(extent, n, max_innermost).empty()) {
      // Too many schemes to list: the innermost first, the rest from what it leaves.
      std::vector<int64_t> widths;
      for (int64_t v = lanes; v <= max_innermost; v += lanes)
        if (extent % v == 0) widths.push_back(v);
      if (!widths.empty()) {
        const int64_t v = pick(widths, rng);
        std::vector<int64_t> lengths = n > 1 ? sample_exact(extent / v, n - 1, extent / v, rng) : std::vector<int64_t>{};
        lengths.push_back(v);
        return lengths;
      }
    }
    return sample_exact(extent, n, max_innermost, rng);
  }
  // Ragged: an innermost tile of k whole vectors, the outer lengths dividing the count of such
  // tiles, rounded up to a multiple of 2, 4 or 8 where the padding stays small.
  std::vector<int64_t> widths;
  for (int64_t v = lanes; v <= max_innermost; v += lanes)
    if (v == lanes || static_cast<double>(round_up(extent, v) - extent) <= kMaxWideTileWaste * static_cast<double>(extent)) widths.push_back(v);
  if (widths.empty()) return sample_exact(extent, n, max_innermost, rng);
  const int64_t v = pick(widths, rng);
  const int64_t tiles = (extent + v - 1) / v;
  std::vector<int64_t> counts = {tiles};
  for (int64_t m : {2, 4, 8}) {
    const int64_t rounded = round_up(tiles, m);
    if (rounded != counts.back() && static_cast<double>(rounded * v - extent) <= kMaxWideTileWaste * static_cast<double>(extent))
      counts.push_back(rounded);
  }
  const int64_t count = pick(counts, rng);
  std::vector<int64_t> lengths = n > 1 ? sample_exact(count, n - 1, count, rng) : std::vector<int64_t>{};
  lengths.push_back(v);
  return lengths;
}

std::vector<int64_t> Factorizations::sample(int64_t extent, int n, int64_t max_innermost, int64_t lanes, std::mt19937_64& rng) {
  if (extent < 1) extent = 1;
  if (n < 1) return {};
  if (lanes > 1 && extent >= lanes && lanes <= max_innermost) return sample_vector_axis(extent, n, max_innermost, lanes, rng);
  int64_t target = extent;
  if (extent >= 16 && divisors(extent).size() <= 4 && std::bernoulli_distribution(0.5)(rng)) target = round_up(extent, 8);
  return sample_exact(target, n, max_innermost, rng);
}

}  // namespace ansor
