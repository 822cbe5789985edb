// Pairwise accuracy and recall@k of predicted scores against measured throughputs.
#include "cost_model/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace ansor {

namespace {

// The positions of the k largest values, largest first, earlier positions first among equals.
std::vector<size_t> top_k(std::span<const double> values, size_t k) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
  order.resize(k);
  return order;
}

}  // namespace

double pairwise_accuracy(std::span<const std::string> workloads, std::span<const double> throughputs,
                         std::span<const double> predicted) {
  if (workloads.size() != throughputs.size() || predicted.size() != throughputs.size())
    throw std::invalid_argument("pairwise_accuracy: workloads, throughputs and predictions differ in length");
  std::map<std::string_view, std::vector<size_t>> groups;
  for (size_t i = 0; i < workloads.size(); ++i) groups[workloads[i]].push_back(i);
  double correct = 0;
  size_t pairs = 0;
  for (const auto& [workload, members] : groups) {
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        double truth = throughputs[members[a]] - throughputs[members[b]];
        if (truth == 0) continue;
        double guess = predicted[members[a]] - predicted[members[b]];
        ++pairs;
        if (guess == 0) {
          correct += 0.5;
        } else if ((truth > 0) == (guess > 0)) {
          correct += 1;
        }
      }
    }
  }
  return pairs ? correct / static_cast<double>(pairs) : std::numeric_limits<double>::quiet_NaN();
}

double recall_at_k(std::span<const double> throughputs, std::span<const double> predicted, int k) {
  if (predicted.size() != throughputs.size())
    throw std::invalid_argument("recall_at_k: throughputs and predictions differ in length");
  if (throughputs.empty() || k < 1) return std::numeric_limits<double>::quiet_NaN();
  size_t n = std::min(static_cast<size_t>(k), throughputs.size());
  std::vector<size_t> best = top_k(throughputs, n);
  std::vector<size_t> chosen = top_k(predicted, n);
  std::sort(best.begin(), best.end());
  std::sort(chosen.begin(), chosen.end());
  std::vector<size_t> both;
  std::set_intersection(best.begin(), best.end(), chosen.begin(), chosen.end(), std::back_inserter(both));
  return static_cast<double>(both.size()) / static_cast<double>(n);
}

double top_k_quality(std::span<const double> throughputs, std::span<const double> predicted, int k) {
  if (predicted.size() != throughputs.size())
    throw std::invalid_argument("top_k_quality: throughputs and predictions differ in length");
  if (throughputs.empty() || k < 1) return std::numeric_limits<double>::quiet_NaN();
  double found = 0;
  for (size_t i : top_k(predicted, std::min(static_cast<size_t>(k), throughputs.size()))) found = std::max(found, throughputs[i]);
  return found / *std::max_element(throughputs.begin(), throughputs.end());
}

}  // namespace ansor
