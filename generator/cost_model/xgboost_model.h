// The learned cost model (paper §5.2): gradient-boosted trees (XGBoost, through its C API) that
// predict a score per statement row; a program's score is the sum of its rows' scores
// (pack-sum, pack_sum.h). The trees are fitted to the throughput normalised per workload, with
// each program weighted by that throughput, so that the model is most exact about the fast
// programs the search is after.
//
// The model is retrained from scratch on all data each time (XGBoost cannot add data to trees
// already grown), and saved beside the cache so that a later build starts from it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"

namespace ansor {

// Training parameters. The tree parameters are those TVM's auto_scheduler uses (XGBModel),
// which the Ansor paper's results were obtained with; trees are grown with XGBoost's histogram
// method. TVM boosts up to 10,000 rounds until the training error stalls; here the held-out
// error decides, within max_rounds, which bounds the cost of training and of each prediction.
struct XGBoostParams {
  int max_depth = 10;           // deep trees: features interact (tile sizes with buffer reuse)
  double eta = 0.2;             // learning rate (shrinkage of each tree)
  double min_child_weight = 0;  // no floor on a leaf's hessian: slow programs weigh almost 0
  double gamma = 0.001;         // minimum loss reduction of a split
  int max_rounds = 300;         // upper bound on boosting rounds (trees)
  // Early stopping: a held-out fraction of the programs (at least kMinValidationPrograms of
  // them, else no hold-out and max_rounds trees) measures the error after each round; training
  // stops after this many rounds without improvement, and the final model is refitted on all
  // programs with the best round count.
  int early_stopping_rounds = 30;
  double validation_fraction = 0.2;
  // XGBoost's threads (0: every hardware thread). One by default: the model's work is small
  // (a few seconds of training, ~60,000 programs scored a second), while OpenMP threads that
  // compete for cores (parallel builds, other tuning processes) made training and prediction
  // 4 to 20 times slower on a shared 2-core machine.
  int nthread = 1;
  uint64_t seed = 43;  // the hold-out split and XGBoost's own seed
  // Fewer measured programs than this and train() leaves the model untrained, so that the
  // search uses random scores: a few dozen programs do not rank thousands (TVM waits for 100).
  int min_programs = 100;
};

// A model file that cannot be used: unreadable, not a cost model, or made for other features.
class CostModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class XGBooster;  // an owned handle of XGBoost's C API (xgboost_model.cpp)

class XGBoostModel final : public CostModel {
 public:
  // Rows have row_length features of the feature set named feature_set (a version string of
  // the extractor): a saved model of another length or set is refused on load.
  XGBoostModel(int row_length, std::string feature_set, XGBoostParams params = {});
  ~XGBoostModel() override;
  XGBoostModel(const XGBoostModel&) = delete;
  XGBoostModel& operator=(const XGBoostModel&) = delete;

  // Programs with no rows are left out (they have no score to fit). Throws
  // std::invalid_argument on a program with another row length or a non-positive time.
  void train(const std::vector<TrainingProgram>& programs) override;
  // Throws std::logic_error when not trained.
  std::vector<double> predict(const std::vector<ProgramRows>& programs) const override;
  bool trained() const override { return booster_ != nullptr; }

  int row_length() const { return row_length_; }
  const std::string& feature_set() const { return feature_set_; }
  const XGBoostParams& params() const { return params_; }
  // Programs of the last training (or of the loaded model's); trees in the model.
  int64_t training_programs() const { return training_programs_; }
  int rounds() const { return rounds_; }

  // Writes the trees and this model's metadata (row length, feature set, training programs) to
  // one file, atomically (a temporary file renamed over it). Throws std::logic_error when not
  // trained, std::runtime_error naming the path when it cannot be written.
  void save(const std::string& path) const;
  // Replaces this model by the one saved at path. Throws CostModelError naming the path when
  // the file cannot be read or parsed, or was saved for another row length or feature set;
  // the model is unchanged then.
  void load(const std::string& path);

 private:
  int row_length_;
  std::string feature_set_;
  XGBoostParams params_;
  std::unique_ptr<XGBooster> booster_;
  int64_t training_programs_ = 0;
  int rounds_ = 0;
};

// Below this many held-out programs the validation error is too noisy to stop on.
inline constexpr int kMinValidationPrograms = 20;

}  // namespace ansor
