// Enumeration and sampling of split factorisations.
#include "sampler/factorization.h"

namespace ansor {

namespace {

// Schemes grow quickly with the number of divisors; beyond this, sampling falls back to
// drawing one divisor at a time.
constexpr size_t kMaxSchemes = 200000;

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

}  // namespace

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

std::vector<int64_t> Factorizations::sample(int64_t extent, int n, int64_t max_innermost, std::mt19937_64& rng) {
  if (extent < 1) extent = 1;
  int64_t target = extent;
  if (extent >= 16 && divisors(extent).size() <= 4 && std::bernoulli_distribution(0.5)(rng)) target = (extent + 7) / 8 * 8;
  const auto& all = schemes(target, n, max_innermost);
  if (!all.empty()) return all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng)];
  // Too many schemes to list: one divisor of what is left at a time, innermost first.
  std::vector<int64_t> lengths(n, 1);
  int64_t rest = target;
  for (int i = n - 1; i >= 0; --i) {
    std::vector<int64_t> ds = divisors(rest);
    if (i == n - 1)
      while (!ds.empty() && ds.back() > max_innermost) ds.pop_back();
    lengths[i] = ds[std::uniform_int_distribution<size_t>(0, ds.size() - 1)(rng)];
    rest /= lengths[i];
  }
  return lengths;
}

}  // namespace ansor
