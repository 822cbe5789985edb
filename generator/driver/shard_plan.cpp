// The split of a kernels.def among shards, and the shard a job engine assigns.
#include "driver/shard_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ansor {

namespace {

std::optional<long> parse_count(std::string_view text) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

ShardSpec make_shard(long index, long count, std::string source) {
  if (count < 1 || count > 1'000'000) throw std::invalid_argument(fmt::format("{}: the shard count must be from 1 to 1000000, not {}", source, count));
  if (index < 0 || index >= count)
    throw std::invalid_argument(fmt::format("{}: shard index {} is not in 0..{} (shards count from 0)", source, index, count - 1));
  return {static_cast<int>(index), static_cast<int>(count), std::move(source)};
}

}  // namespace

ShardSpec parse_shard(std::string_view text, std::string source) {
  size_t slash = text.find('/');
  std::optional<long> index = parse_count(text.substr(0, slash)), count;
  if (slash != std::string_view::npos) count = parse_count(text.substr(slash + 1));
  if (!index || !count) throw std::invalid_argument(fmt::format("{}: '{}' is not a shard I/N (such as 0/4)", source, text));
  return make_shard(*index, *count, std::move(source));
}

std::optional<ShardSpec> shard_from_environment(const std::function<const char*(const char*)>& getenv) {
  auto number = [&](const char* name) -> std::optional<long> {
    const char* value = getenv(name);
    if (!value) return std::nullopt;
    std::optional<long> n = parse_count(value);
    if (!n) throw std::invalid_argument(fmt::format("{}='{}' is not a number", name, value));
    return n;
  };
  if (const char* shard = getenv("ANSOR_SHARD")) return parse_shard(shard, fmt::format("ANSOR_SHARD={}", shard));
  if (std::optional<long> index = number("JOB_COMPLETION_INDEX")) {
    std::optional<long> count = number("ANSOR_SHARD_COUNT");
    if (!count)
      throw std::invalid_argument(fmt::format("JOB_COMPLETION_INDEX={} (a Kubernetes Indexed Job) needs the shard count in ANSOR_SHARD_COUNT",
                                              *index));
    return make_shard(*index, *count, fmt::format("JOB_COMPLETION_INDEX={}, ANSOR_SHARD_COUNT={}", *index, *count));
  }
  if (std::optional<long> task = number("SLURM_ARRAY_TASK_ID")) {
    std::optional<long> count = number("SLURM_ARRAY_TASK_COUNT");
    if (!count) throw std::invalid_argument(fmt::format("SLURM_ARRAY_TASK_ID={} comes without SLURM_ARRAY_TASK_COUNT", *task));
    long first = number("SLURM_ARRAY_TASK_MIN").value_or(0);
    return make_shard(*task - first, *count,
                      fmt::format("SLURM_ARRAY_TASK_ID={}, SLURM_ARRAY_TASK_MIN={}, SLURM_ARRAY_TASK_COUNT={}", *task, first, *count));
  }
  return std::nullopt;
}

double kernel_weight(const Program& program, const Kernel& kernel) {
  double counted = 0;
  for (const Network& n : program.networks)
    for (const NetworkMember& m : n.members)
      if (m.kernel == kernel.name) counted += m.count;
  return counted > 0 ? counted : kernel.attrs.weight;
}

std::vector<int> kernel_trials(const Program& program, std::optional<int> each) {
  std::vector<int> trials;
  for (const Kernel& k : program.kernels) trials.push_back(each.value_or(static_cast<int>(k.attrs.trials.value_or(64))));
  return trials;
}

std::vector<int> apportion_trials(const std::vector<int>& per_kernel, int total) {
  std::vector<int> parts(per_kernel.size(), 0);
  if (per_kernel.empty() || total <= 0) return parts;
  // Kernels that ask for no trials of their own share the budget evenly.
  const long sum = std::accumulate(per_kernel.begin(), per_kernel.end(), 0L);
  auto share = [&](size_t i) { return sum > 0 ? static_cast<double>(per_kernel[i]) / static_cast<double>(sum) : 1.0 / static_cast<double>(per_kernel.size()); };
  std::vector<std::pair<double, size_t>> fractions;
  long given = 0;
  for (size_t i = 0; i < per_kernel.size(); ++i) {
    double exact = static_cast<double>(total) * share(i);
    parts[i] = static_cast<int>(std::floor(exact));
    given += parts[i];
    fractions.emplace_back(exact - parts[i], i);
  }
  std::stable_sort(fractions.begin(), fractions.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t j = 0; given < total; ++j, ++given) ++parts[fractions[j % fractions.size()].second];
  return parts;
}

double ShardPlan::imbalance() const {
  if (shard_cost.empty()) return 1;
  double mean = std::accumulate(shard_cost.begin(), shard_cost.end(), 0.0) / static_cast<double>(shard_cost.size());
  return mean > 0 ? *std::max_element(shard_cost.begin(), shard_cost.end()) / mean : 1;
}

ShardPlan plan_shards(const Program& program, const std::vector<int>& trials, int count) {
  if (trials.size() != program.kernels.size()) throw std::invalid_argument("plan_shards: one trial count per kernel");
  if (count < 1) throw std::invalid_argument("plan_shards: at least one shard");
  ShardPlan plan;
  const size_t n = program.kernels.size();
  plan.shard_of.assign(n, 0);
  plan.shard_cost.assign(static_cast<size_t>(count), 0);
  plan.shard_trials.assign(static_cast<size_t>(count), 0);
  for (size_t i = 0; i < n; ++i) {
    const Kernel& k = program.kernels[i];
    // A kernel of no FLOPs (a copy, a layout change) still costs its trials' measurements.
    plan.cost.push_back(std::max(k.dag.flop_count(), 1.0) * kernel_weight(program, k) * trials[i]);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.cost[a] > plan.cost[b]; });
  for (size_t i : order) {
    size_t shard = static_cast<size_t>(std::min_element(plan.shard_cost.begin(), plan.shard_cost.end()) - plan.shard_cost.begin());
    plan.shard_of[i] = static_cast<int>(shard);
    plan.shard_cost[shard] += plan.cost[i];
    plan.shard_trials[shard] += trials[i];
  }
  return plan;
}

Program shard_program(const Program& program, const ShardPlan& plan, int shard) {
  Program part{program.source, {}, program.networks};
  for (size_t i = 0; i < program.kernels.size(); ++i)
    if (plan.shard_of[i] == shard) part.kernels.push_back(program.kernels[i]);
  return part;
}

}  // namespace ansor
