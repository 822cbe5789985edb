// XGBoost through its C API: boosting with the pack-sum gradients, early stopping on held-out
// programs, prediction, and the model file with its metadata.
#include "cost_model/xgboost_model.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>

#include "cost_model/pack_sum.h"
#include "support/file_util.h"

namespace ansor {

namespace {

// The metadata stored as attributes of the booster, so that one file holds the whole model.
constexpr const char* kRowLengthAttr = "ansor_row_length";
constexpr const char* kFeatureSetAttr = "ansor_feature_set";
constexpr const char* kTrainingProgramsAttr = "ansor_training_programs";

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(fmt::format("XGBoost: {}: {}", what, XGBGetLastError()));
}

// A DMatrix over a copy of dense rows (missing values are NaN, which features never are).
class DMatrix {
 public:
  DMatrix(const PackedRows& rows, int nthread) {
    check(XGDMatrixCreateFromMat_omp(rows.values.data(), rows.rows(), static_cast<bst_ulong>(rows.row_length), NAN, &handle_,
                                     nthread),
          "creating a matrix");
  }
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

// Predictions of every tree, one per row; `training` lets XGBoost reuse its cached predictions
// of a training matrix.
std::vector<float> predict_rows(BoosterHandle booster, const DMatrix& matrix, bool training) {
  std::string config =
      fmt::format(R"({{"type": 0, "training": {}, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false}})", training);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(booster, matrix.get(), config.c_str(), &shape, &dims, &result), "predicting");
  bst_ulong n = 1;
  for (bst_ulong d = 0; d < dims; ++d) n *= shape[d];
  return {result, result + n};
}

// Predictions of every tree for rows read in place: no DMatrix, which would copy them.
std::vector<float> predict_dense(BoosterHandle booster, const PackedRows& rows) {
  std::string values = fmt::format(R"({{"data": [{}, true], "shape": [{}, {}], "typestr": "<f4", "version": 3}})",
                                   reinterpret_cast<uintptr_t>(rows.values.data()), rows.rows(), rows.row_length);
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false, "missing": NaN, "cache_id": 0})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDense(booster, values.c_str(), config, nullptr, &shape, &dims, &result), "predicting");
  bst_ulong n = 1;
  for (bst_ulong d = 0; d < dims; ++d) n *= shape[d];
  return {result, result + n};
}

// The programs at `members`, packed, with their labels and weights (the normalised throughput
// serves as both).
struct PackedSet {
  PackedRows rows;
  std::vector<double> labels;

  PackedSet(const std::vector<TrainingProgram>& programs, const std::vector<double>& throughputs,
            const std::vector<size_t>& members, int row_length) {
    rows.row_length = row_length;
    for (size_t i : members) {
      rows.add(programs[i].rows);
      labels.push_back(throughputs[i]);
    }
  }
};

}  // namespace

// An owned booster handle.
class XGBooster {
 public:
  BoosterHandle handle = nullptr;

  explicit XGBooster(std::vector<DMatrixHandle> cache) {
    check(XGBoosterCreate(cache.data(), cache.size(), &handle), "creating a booster");
  }
  ~XGBooster() { XGBoosterFree(handle); }
  XGBooster(const XGBooster&) = delete;
  XGBooster& operator=(const XGBooster&) = delete;

  void set(const char* name, const std::string& value) {
    check(XGBoosterSetParam(handle, name, value.c_str()), fmt::format("setting {}", name).c_str());
  }
  void set_attr(const char* name, const std::string& value) {
    check(XGBoosterSetAttr(handle, name, value.c_str()), "setting an attribute");
  }
  std::optional<std::string> attr(const char* name) const {
    const char* value = nullptr;
    int found = 0;
    check(XGBoosterGetAttr(handle, name, &value, &found), "reading an attribute");
    if (!found) return std::nullopt;
    return std::string(value);
  }
};

namespace {

// The parameters that are not part of a saved model.
void set_runtime_params(const XGBoostParams& p, XGBooster& booster) {
  booster.set("nthread", std::to_string(p.nthread));
  booster.set("verbosity", "0");
  booster.set("seed", std::to_string(p.seed));
}

}  // namespace

XGBoostModel::XGBoostModel(int row_length, std::string feature_set, XGBoostParams params)
    : row_length_(row_length), feature_set_(std::move(feature_set)), params_(params) {
  if (row_length_ <= 0) throw std::invalid_argument(fmt::format("XGBoostModel: row length {}", row_length_));
}

XGBoostModel::~XGBoostModel() = default;

namespace {

// Boosts up to `max_rounds` trees on `train` with the pack-sum objective. With a validation
// set, stops after params.early_stopping_rounds rounds without a better validation error;
// returns the booster and the best round count.
std::pair<std::unique_ptr<XGBooster>, int> boost(const XGBoostParams& p, const PackedSet& train, const PackedSet* validation,
                                                 int max_rounds) {
  DMatrix train_matrix(train.rows, p.nthread);
  std::unique_ptr<DMatrix> validation_matrix;
  std::vector<DMatrixHandle> cache{train_matrix.get()};
  if (validation) {
    validation_matrix = std::make_unique<DMatrix>(validation->rows, p.nthread);
    cache.push_back(validation_matrix->get());
  }
  auto booster = std::make_unique<XGBooster>(cache);
  set_runtime_params(p, *booster);
  booster->set("booster", "gbtree");
  booster->set("tree_method", "hist");
  booster->set("max_depth", std::to_string(p.max_depth));
  booster->set("eta", fmt::format("{}", p.eta));
  booster->set("min_child_weight", fmt::format("{}", p.min_child_weight));
  booster->set("gamma", fmt::format("{}", p.gamma));
  // Not XGBoost's 0.5: a program's score sums its rows, so a constant per row would scale with
  // the row count.
  booster->set("base_score", "0");
  booster->set("disable_default_eval_metric", "1");

  const std::vector<double>& weights = train.labels;
  double best_error = INFINITY;
  int best_rounds = max_rounds;
  for (int round = 0; round < max_rounds; ++round) {
    std::vector<float> predictions = predict_rows(booster->handle, train_matrix, true);
    PackSumGradients g = pack_sum_squared_error(predictions, train.rows.offsets, train.labels, weights);
    check(XGBoosterBoostOneIter(booster->handle, train_matrix.get(), g.gradient.data(), g.hessian.data(),
                                static_cast<bst_ulong>(g.gradient.size())),
          "boosting");
    if (!validation) continue;
    std::vector<double> sums = pack_sums(predict_rows(booster->handle, *validation_matrix, false), validation->rows.offsets);
    double error = pack_sum_weighted_rmse(sums, validation->labels, validation->labels);
    if (error < best_error) {
      best_error = error;
      best_rounds = round + 1;
    } else if (round + 1 - best_rounds >= p.early_stopping_rounds) {
      break;
    }
  }
  return {std::move(booster), best_rounds};
}

}  // namespace

void XGBoostModel::train(const std::vector<TrainingProgram>& programs) {
  std::vector<double> throughputs = normalized_throughputs(programs);
  std::vector<size_t> usable;
  for (size_t i = 0; i < programs.size(); ++i) {
    const ProgramRows& rows = programs[i].rows;
    if (rows.row_length != row_length_ || rows.values.size() % static_cast<size_t>(row_length_) != 0)
      throw std::invalid_argument(
          fmt::format("training program {} (workload {}) has {} values in rows of {}; the model takes rows of {}", i,
                      programs[i].workload, rows.values.size(), rows.row_length, row_length_));
    if (rows.rows() > 0) usable.push_back(i);
  }
  booster_.reset();
  training_programs_ = 0;
  rounds_ = 0;
  if (usable.size() < static_cast<size_t>(std::max(params_.min_programs, 1))) return;

  std::mt19937_64 rng(params_.seed);
  std::shuffle(usable.begin(), usable.end(), rng);
  auto held_out = static_cast<size_t>(std::floor(params_.validation_fraction * static_cast<double>(usable.size())));
  if (held_out < static_cast<size_t>(kMinValidationPrograms) || held_out >= usable.size()) held_out = 0;

  int rounds = params_.max_rounds;
  if (held_out > 0) {
    std::vector<size_t> fit_part(usable.begin() + static_cast<std::ptrdiff_t>(held_out), usable.end());
    std::vector<size_t> check_part(usable.begin(), usable.begin() + static_cast<std::ptrdiff_t>(held_out));
    PackedSet fit_set(programs, throughputs, fit_part, row_length_);
    PackedSet check_set(programs, throughputs, check_part, row_length_);
    rounds = boost(params_, fit_set, &check_set, params_.max_rounds).second;
  }
  PackedSet all(programs, throughputs, usable, row_length_);
  booster_ = boost(params_, all, nullptr, rounds).first;
  training_programs_ = static_cast<int64_t>(usable.size());
  rounds_ = rounds;
  booster_->set_attr(kRowLengthAttr, std::to_string(row_length_));
  booster_->set_attr(kFeatureSetAttr, feature_set_);
  booster_->set_attr(kTrainingProgramsAttr, std::to_string(training_programs_));
}

std::vector<double> XGBoostModel::predict(const std::vector<ProgramRows>& programs) const {
  if (!booster_) throw std::logic_error("XGBoostModel::predict: the model is not trained");
  PackedRows packed;
  packed.row_length = row_length_;
  for (const ProgramRows& p : programs) packed.add(p);
  if (packed.rows() == 0) return std::vector<double>(programs.size(), 0.0);
  return pack_sums(predict_dense(booster_->handle, packed), packed.offsets);
}

void XGBoostModel::save(const std::string& path) const {
  if (!booster_) throw std::logic_error("XGBoostModel::save: the model is not trained");
  bst_ulong length = 0;
  const char* data = nullptr;
  check(XGBoosterSaveModelToBuffer(booster_->handle, R"({"format": "ubj"})", &length, &data), "saving the model");
  write_file_if_changed(path, std::string(data, length));
}

void XGBoostModel::load(const std::string& path) {
  std::optional<std::string> content = read_file(path);
  if (!content) throw CostModelError(fmt::format("cannot read the cost model '{}'", path));
  auto booster = std::make_unique<XGBooster>(std::vector<DMatrixHandle>{});
  if (XGBoosterLoadModelFromBuffer(booster->handle, content->data(), content->size()) != 0)
    throw CostModelError(fmt::format("'{}' is not an XGBoost model: {}", path, XGBGetLastError()));
  std::optional<std::string> length = booster->attr(kRowLengthAttr);
  std::optional<std::string> feature_set = booster->attr(kFeatureSetAttr);
  std::optional<std::string> count = booster->attr(kTrainingProgramsAttr);
  if (!length || !feature_set || !count)
    throw CostModelError(fmt::format("'{}' is an XGBoost model without the metadata of an ansor cost model", path));
  if (*length != std::to_string(row_length_) || *feature_set != feature_set_)
    throw CostModelError(
        fmt::format("the cost model '{}' was trained on rows of {} features of feature set '{}'; this model "
                    "takes rows of {} features of feature set '{}'",
                    path, *length, *feature_set, row_length_, feature_set_));
  int64_t programs = 0;
  try {
    programs = std::stoll(*count);
  } catch (const std::exception&) {
    throw CostModelError(fmt::format("the cost model '{}' has a malformed training-set size '{}'", path, *count));
  }
  int rounds = 0;
  check(XGBoosterBoostedRounds(booster->handle, &rounds), "counting rounds");
  set_runtime_params(params_, *booster);
  booster_ = std::move(booster);
  training_programs_ = programs;
  rounds_ = rounds;
}

}  // namespace ansor
