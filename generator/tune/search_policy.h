// The per-round interface of a search policy (random, ansor) for one tuning task: the tuning
// loop, and later the task scheduler across kernels, asks it for schedules to measure and tells
// it what the measurements (and the records already in the cache) found.
//
// Policies are made by name through a registry, so that the CLI can list and validate them and
// a new policy registers itself in one place.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dag/compute_dag.h"
#include "records/record.h"
#include "sampler/sampler_context.h"
#include "schedule/state.h"

namespace ansor {

// A schedule with the record of its measurement (which may be a failure).
struct MeasuredCandidate {
  State state;
  Record record;
};

class ProgramScorer;  // tune/program_scorer.h

// What a policy searches: one kernel's DAG on one target.
struct SearchTask {
  std::string kernel_name;
  std::shared_ptr<const ComputeDAG> dag;
  SamplerContext sampler;
  uint64_t seed = 0;
  // The cost model of policies that use one, shared by the tasks of a tuning run, made on the
  // first call (a model learns from the whole cache: policies without one never pay for it);
  // none: random scores (RandomScorer).
  std::function<std::shared_ptr<ProgramScorer>()> scorer = {};
  // The identity of the program a schedule lowers to, or none when that program was measured
  // before and its measurement would only be copied (CandidateMeasurer::new_program); an empty
  // identity is unknown. Without the function, no schedule is known to repeat a program.
  std::function<std::optional<std::string>(const State&)> new_program = {};
};

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  virtual std::string_view name() const = 0;
  // Up to n schedules to measure next, none of them one that was proposed or reported before;
  // fewer, or none, when the policy finds no more new ones.
  virtual std::vector<State> propose(int n) = 0;
  // Measured schedules: those of the last proposal, and before the first round the records the
  // cache already holds for the task.
  virtual void update(const std::vector<MeasuredCandidate>& measured) = 0;
};

using SearchPolicyFactory = std::function<std::unique_ptr<SearchPolicy>(const SearchTask&)>;

// Makes the named policy for a task. Throws std::invalid_argument naming the known policies
// when there is none of that name.
std::unique_ptr<SearchPolicy> make_search_policy(std::string_view name, const SearchTask& task);

// The names of the registered policies, sorted.
std::vector<std::string> search_policy_names();

// Adds (or replaces) a policy. The built-in policies are registered from the start.
void register_search_policy(const std::string& name, SearchPolicyFactory factory);

}  // namespace ansor
