// The learned scorer: features, the XGBoost model and its training set from the cache.
#include "tune/learned_scorer.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <limits>

#include "dag/dag_text.h"
#include "features/features.h"
#include "schedule/bound_inference.h"
#include "support/file_name.h"
#include "records/record_match.h"

namespace ansor {

namespace {

// The score of a program that does not lower: below any prediction.
constexpr double kUnlowerable = -std::numeric_limits<double>::infinity();

ProgramRows program_rows(const State& state) {
  ProgramRows rows(kNumFeatures);
  for (const StoreFeatures& store : extract_features(state)) rows.add_row(store.values);
  return rows;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string cost_model_path(const TuningCache& cache, const std::string& target) {
  return (std::filesystem::path(cache.dir()) / (file_name_stem(target) + ".model.ubj")).string();
}

LearnedScorer::LearnedScorer(const TuningCache& cache, const std::string& target, LearnedScorerOptions options)
    : options_(std::move(options)), model_(kNumFeatures, std::string(kFeatureSetName), options_.model), random_(options_.seed) {
  auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::shared_ptr<const ComputeDAG>> dags;  // by workload key
  // The target's own records, then those of the targets that serve it (records/record_match.h:
  // whatever their compiler), whose times are normalised among themselves: another machine's
  // speed is not this one's.
  for (const std::string& source : serving_targets(cache.targets(), target)) {
    for (const Record& r : cache.load(source).records) {
      if (!r.ok() || !(r.seconds > 0)) continue;
      std::shared_ptr<const ComputeDAG>& dag = dags[r.workload_key];
      try {
        if (!dag) dag = std::make_shared<const ComputeDAG>(parse_canonical_dag(r.dag, cache.file_for(source)));
        if (dag->canonical_text() != r.dag) continue;  // a key shared by two DAGs: not this one
        learn(source == target ? r.workload_key : r.workload_key + '@' + source, replay(dag, r.steps), r.seconds);
      } catch (const std::exception&) {
        // A record this generator cannot replay or lower teaches nothing; the tuner and the
        // emitter report unusable records of their own kernels.
      }
    }
  }
  bool loaded = false;
  if (!options_.model_path.empty() && std::filesystem::exists(options_.model_path)) {
    try {
      model_.load(options_.model_path);
      loaded = true;
    } catch (const CostModelError&) {
      // Made for other features or unreadable: trained again below from the records.
    }
  }
  seconds_ += seconds_since(start);
  if (!loaded) retrain();
}

bool LearnedScorer::learn(const std::string& workload, const State& state, double seconds) {
  if (!known_.insert(workload + '\n' + state.signature()).second) return false;
  programs_.push_back({workload, program_rows(state), seconds});
  return true;
}

void LearnedScorer::retrain() {
  auto start = std::chrono::steady_clock::now();
  model_.train(programs_);
  if (model_.trained() && !options_.model_path.empty()) model_.save(options_.model_path);
  seconds_ += seconds_since(start);
}

std::vector<double> LearnedScorer::score(const std::vector<State>& states) {
  if (!model_.trained()) return random_.score(states);
  std::vector<ProgramRows> rows;
  std::vector<size_t> lowered;  // indices of the states that lowered
  for (size_t i = 0; i < states.size(); ++i) {
    try {
      rows.push_back(program_rows(states[i]));
      lowered.push_back(i);
    } catch (const InvalidState&) {
    }
  }
  std::vector<double> predicted = model_.predict(rows);
  std::vector<double> scores(states.size(), kUnlowerable);
  for (size_t j = 0; j < lowered.size(); ++j) scores[lowered[j]] = predicted[j];
  return scores;
}

void LearnedScorer::update(const std::vector<MeasuredCandidate>& measured) {
  auto start = std::chrono::steady_clock::now();
  bool added = false;
  for (const MeasuredCandidate& m : measured) {
    if (!m.record.ok() || !(m.record.seconds > 0)) continue;
    try {
      added |= learn(m.record.workload_key, m.state, m.record.seconds);
    } catch (const InvalidState&) {
      // Measured, so it lowered then; nothing to learn if this generator no longer lowers it.
    }
  }
  seconds_ += seconds_since(start);
  if (added) retrain();
}

std::function<std::shared_ptr<ProgramScorer>()> learned_scorer_source(const TuningCache& cache, const std::string& target, uint64_t seed) {
  auto made = std::make_shared<std::shared_ptr<ProgramScorer>>();
  return [made, cache, target, seed]() {
    if (!*made) {
      LearnedScorerOptions options;
      options.seed = seed;
      options.model_path = cost_model_path(cache, target);
      *made = std::make_shared<LearnedScorer>(cache, target, options);
    }
    return *made;
  };
}

}  // namespace ansor
