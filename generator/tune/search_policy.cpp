// The registry of search policies, with the built-in ones.
#include "tune/search_policy.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "tune/ansor_policy.h"
#include "tune/random_policy.h"

namespace ansor {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, SearchPolicyFactory, std::less<>> factories;
};

// Built-ins are listed here rather than registered by static initialisers, which a static
// library drops when nothing else references their object file.
template <class Policy>
std::unique_ptr<SearchPolicy> make(const SearchTask& task) {
  return std::make_unique<Policy>(task);
}

// The Ansor policy without crossover: for measuring what crossover adds.
std::unique_ptr<SearchPolicy> make_ansor_without_crossover(const SearchTask& task) {
  EvolutionParams params;
  params.crossover_probability = 0;
  return std::make_unique<AnsorPolicy>(task, params, "ansor-no-crossover");
}

Registry& registry() {
  static Registry r{{}, {{"random", make<RandomPolicy>}, {"ansor", make<AnsorPolicy>}, {"ansor-no-crossover", make_ansor_without_crossover}}};
  return r;
}

}  // namespace

std::unique_ptr<SearchPolicy> make_search_policy(std::string_view name, const SearchTask& task) {
  SearchPolicyFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(name);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory)
    throw std::invalid_argument(
        fmt::format("unknown search policy '{}'; the policies are: {}", name, fmt::join(search_policy_names(), ", ")));
  return factory(task);
}

std::vector<std::string> search_policy_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : r.factories) names.push_back(name);
  return names;
}

void register_search_policy(const std::string& name, SearchPolicyFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories[name] = std::move(factory);
}

}  // namespace ansor
