// How well the cost model ranks real programs: for each target file of a tuning cache, every
// measured record is rebuilt from the record alone (its DAG from the canonical text, its
// schedule replayed), its features extracted, and the model trained on a random 80% of them;
// the figures are pairwise accuracy, recall@10 and the best true throughput among the predicted
// top 10 (over the true best) on the other 20%, per workload, and the
// seconds that feature extraction and training took. Not a test: nothing is asserted.
//
// With --unseen, each workload is instead held out whole and ranked by a model trained on the
// other workloads alone: how well the model transfers to a kernel the cache has no record of.
//
//   bench_cost_model_records [CACHE_DIR (default: the repository's cache)] [--threads 1]
//                            [--fixed-rounds N (no early stopping: N trees)] [--unseen]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "cost_model/ranking_metrics.h"
#include "cost_model/xgboost_model.h"
#include "dag/dag_text.h"
#include "features/features.h"
#include "records/cache.h"
#include "schedule/state.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Sample {
  ansor::TrainingProgram program;
  std::string kernel;
};

// The measured records of one target as training programs; records that no longer replay are
// counted and left out.
std::vector<Sample> load_samples(const ansor::TuningCache& cache, const std::string& target, int& skipped) {
  std::map<std::string, std::shared_ptr<const ansor::ComputeDAG>> dags;
  std::vector<Sample> samples;
  for (const ansor::Record& r : cache.load(target).records) {
    if (!r.ok() || r.seconds <= 0) continue;
    auto [it, fresh] = dags.try_emplace(r.workload_key);
    if (fresh) it->second = std::make_shared<const ansor::ComputeDAG>(ansor::parse_canonical_dag(r.dag));
    try {
      ansor::State state = ansor::replay(it->second, r.steps);
      ansor::ProgramRows rows(ansor::kNumFeatures);
      for (const ansor::StoreFeatures& f : ansor::extract_features(state)) rows.add_row(f.values);
      samples.push_back({{r.workload_key, std::move(rows), r.seconds}, r.kernel});
    } catch (const std::exception&) {
      ++skipped;
    }
  }
  return samples;
}

// Prints how the model ranks the programs of one workload.
void report(const ansor::XGBoostModel& model, const std::string& workload, const std::vector<const Sample*>& members, const char* what) {
  std::vector<ansor::ProgramRows> rows;
  std::vector<std::string> workloads;
  std::vector<double> throughputs;
  for (const Sample* s : members) {
    rows.push_back(s->program.rows);
    workloads.push_back(workload);
    throughputs.push_back(1.0 / s->program.seconds);
  }
  std::vector<double> predicted = model.predict(rows);
  fmt::print("  {:<22} {:4} {}: pairwise accuracy {:.3f}, recall@10 {:.2f}, best of predicted top 10 {:.3f} of the best\n",
             members.front()->kernel, members.size(), what, ansor::pairwise_accuracy(workloads, throughputs, predicted),
             ansor::recall_at_k(throughputs, predicted, 10), ansor::top_k_quality(throughputs, predicted, 10));
}

bool has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

int int_flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : std::string(ANSOR_BENCH_SOURCE_DIR) + "/cache";
  ansor::XGBoostParams params;
  params.nthread = int_flag(argc, argv, "--threads", params.nthread);
  if (int rounds = int_flag(argc, argv, "--fixed-rounds", 0); rounds > 0) {
    params.max_rounds = rounds;
    params.validation_fraction = 0;
  }
  ansor::TuningCache cache(dir);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::string target = entry.path().stem().string();
    int skipped = 0;
    auto start = Clock::now();
    std::vector<Sample> samples = load_samples(cache, target, skipped);
    double extract_seconds = seconds_since(start);

    if (has_flag(argc, argv, "--unseen")) {
      std::map<std::string, std::vector<const Sample*>> by_workload;
      for (const Sample& s : samples) by_workload[s.program.workload].push_back(&s);
      fmt::print("{}: {} records ({} did not replay), features {:.1f} s\n", target, samples.size(), skipped, extract_seconds);
      for (const auto& [workload, members] : by_workload) {
        std::vector<ansor::TrainingProgram> train;
        for (const Sample& s : samples)
          if (s.program.workload != workload) train.push_back(s.program);
        ansor::XGBoostModel model(ansor::kNumFeatures, "bench", params);
        model.train(train);
        if (model.trained()) report(model, workload, members, "unseen");
      }
      continue;
    }
    std::mt19937_64 rng(1);
    std::shuffle(samples.begin(), samples.end(), rng);
    size_t held_out = samples.size() / 5;
    std::vector<ansor::TrainingProgram> train;
    for (size_t i = held_out; i < samples.size(); ++i) train.push_back(samples[i].program);
    ansor::XGBoostModel model(ansor::kNumFeatures, "bench", params);
    start = Clock::now();
    model.train(train);
    double train_seconds = seconds_since(start);
    fmt::print("{}: {} records ({} did not replay), features {:.1f} s; trained on {} in {:.2f} s, {} rounds\n", target,
               samples.size(), skipped, extract_seconds, train.size(), train_seconds, model.rounds());
    if (!model.trained()) continue;

    std::map<std::string, std::vector<const Sample*>> by_workload;
    for (size_t i = 0; i < held_out; ++i) by_workload[samples[i].program.workload].push_back(&samples[i]);
    for (const auto& [workload, members] : by_workload) report(model, workload, members, "held out");
  }
}
