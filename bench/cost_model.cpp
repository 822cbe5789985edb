// The cost model's speed: training seconds on N programs of R rows, and predictions per second
// for batches of the sizes the evolutionary search scores. The programs are synthetic (random
// features, a nonlinear true score), so the figures measure XGBoost's work, not feature
// extraction. Not a test: nothing is asserted.
//
//   bench_cost_model [--programs 2000] [--rows 10] [--features 168] [--threads 1]
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "cost_model/ranking_metrics.h"
#include "cost_model/xgboost_model.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Programs with `rows` rows of log-scaled features, as extracted ones are; the true score sums a
// nonlinear function of a few features over rows.
std::vector<ansor::TrainingProgram> make_programs(int count, int rows, int features, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> feature(0.0f, 20.0f);
  std::vector<ansor::TrainingProgram> programs;
  for (int i = 0; i < count; ++i) {
    ansor::TrainingProgram p{"w" + std::to_string(i % 4), ansor::ProgramRows(features), 0};
    double score = 0;
    std::vector<float> row(static_cast<size_t>(features));
    for (int r = 0; r < rows; ++r) {
      for (float& x : row) x = feature(rng);
      score += std::exp(0.1 * row[0]) * (row[1] > 10 ? 2.0 : 0.5) + 0.01 * row[2] * row[3];
      p.rows.add_row(row);
    }
    p.seconds = 1.0 / score;
    programs.push_back(std::move(p));
  }
  return programs;
}

int int_flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int count = int_flag(argc, argv, "--programs", 2000);
  int rows = int_flag(argc, argv, "--rows", 10);
  int features = int_flag(argc, argv, "--features", 168);
  ansor::XGBoostParams params;
  params.nthread = int_flag(argc, argv, "--threads", params.nthread);

  std::vector<ansor::TrainingProgram> train = make_programs(count, rows, features, 1);
  std::vector<ansor::TrainingProgram> test = make_programs(1000, rows, features, 2);
  fmt::print("{} training programs x {} rows x {} features, {} XGBoost threads (0: all)\n", count, rows, features,
             params.nthread);

  for (double fraction : {params.validation_fraction, 0.0}) {
    ansor::XGBoostParams p = params;
    p.validation_fraction = fraction;
    ansor::XGBoostModel model(features, "bench", p);
    auto start = Clock::now();
    model.train(train);
    double seconds = seconds_since(start);
    std::vector<ansor::ProgramRows> test_rows;
    std::vector<std::string> workloads;
    std::vector<double> truth;
    for (const ansor::TrainingProgram& t : test) {
      test_rows.push_back(t.rows);
      workloads.push_back(t.workload);
      truth.push_back(1.0 / t.seconds);
    }
    double accuracy = ansor::pairwise_accuracy(workloads, truth, model.predict(test_rows));
    fmt::print("train ({}): {:.2f} s, {} rounds; held-out pairwise accuracy {:.3f}\n",
               fraction > 0 ? fmt::format("early stopping on {:.0f}% held out, refit", 100 * fraction) : "fixed rounds", seconds,
               model.rounds(), accuracy);
  }

  ansor::XGBoostModel model(features, "bench", params);
  model.train(train);
  for (int batch : {64, 512, 4096}) {
    std::vector<ansor::ProgramRows> programs;
    for (int i = 0; i < batch; ++i) programs.push_back(test[static_cast<size_t>(i) % test.size()].rows);
    int calls = 0;
    auto start = Clock::now();
    while (seconds_since(start) < 1.0 || calls < 3) {
      model.predict(programs);
      ++calls;
    }
    double seconds = seconds_since(start);
    fmt::print("predict: batches of {:5d} programs: {:9.0f} programs/s ({:.2f} ms a batch)\n", batch, batch * calls / seconds,
               1e3 * seconds / calls);
  }
}
