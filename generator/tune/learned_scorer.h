// The ansor policy's scorer: every candidate's features (features/) scored by the XGBoost cost
// model (cost_model/) with the pack-sum objective.
//
// The model learns from every usable record of the target in the cache, whatever its workload
// (each record carries its DAG's text, which rebuilds the DAG its steps replay on), and from
// those of targets with the same ISA (records/record_match.h), whatever their compiler, so it ranks
// from the first round when the cache holds records of earlier builds or other kernels; it is
// retrained from all of them after every round that measured something new, and saved beside
// the cache so that the next run starts with a trained model before it has featurised anything.
// While it has too few programs to be trained (XGBoostParams::min_programs), scores are random.
// One scorer serves every task of a tuning run on one target.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cost_model/xgboost_model.h"
#include "records/cache.h"
#include "tune/program_scorer.h"

namespace ansor {

struct LearnedScorerOptions {
  XGBoostParams model;
  uint64_t seed = 0;  // of the random scores before the model is trained
  // Where the model is saved and loaded from; empty: not saved.
  std::string model_path;
};

class LearnedScorer final : public ProgramScorer {
 public:
  // Learns the cache's usable records of the target (records that fail to replay or lower are
  // skipped) and loads the saved model when it was made for these features; otherwise trains
  // when there are enough records.
  LearnedScorer(const TuningCache& cache, const std::string& target, LearnedScorerOptions options);

  // A program that does not lower scores below every program that does.
  std::vector<double> score(const std::vector<State>& states) override;
  // Adds the measured programs that succeeded and were not known yet, then retrains and saves.
  void update(const std::vector<MeasuredCandidate>& measured) override;
  bool informative() const override { return model_.trained(); }

  const XGBoostModel& model() const { return model_; }
  int training_programs() const { return static_cast<int>(programs_.size()); }
  // Seconds spent featurising and training since construction.
  double seconds() const { return seconds_; }

 private:
  // Adds a measured program once (by workload and loop structure); whether it was new.
  bool learn(const std::string& workload, const State& state, double seconds);
  void retrain();

  LearnedScorerOptions options_;
  XGBoostModel model_;
  RandomScorer random_;
  std::vector<TrainingProgram> programs_;
  std::set<std::string> known_;
  double seconds_ = 0;
};

// The model file of a target in a cache directory: beside the target's records.
std::string cost_model_path(const TuningCache& cache, const std::string& target);

// A scorer source for SearchTask::scorer: on its first call it makes a LearnedScorer of the
// cache's records of the target (its model saved at cost_model_path), which it returns on every
// later call, so that the tasks given the same source share one model.
std::function<std::shared_ptr<ProgramScorer>()> learned_scorer_source(const TuningCache& cache, const std::string& target, uint64_t seed);

}  // namespace ansor
