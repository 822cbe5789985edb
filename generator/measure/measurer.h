// Measurement: candidates are built (builder.h) and then run, checked and timed in a separate
// worker process (tools/ansor-measure-worker.cpp), restarted whenever a candidate kills it.
// CUDA candidates run on the GPU and are checked against the reference program (the naive
// program's sums, walked by rows) run on the CPU.
// Every candidate comes back as a record: its time, or why it has none. With
// MeasureOptions::reuse_programs, a candidate whose program (its printed source) this measurer
// measured before, in this batch or an earlier one, is neither compiled nor run: its record
// copies that measurement (the search reaches one loop program by several schedules), unless it
// was a time limit or a failure of the worker. Only one process measures on a target at a time
// (a lock file), and building and running never overlap.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/candidate_measurer.h"
#include "measure/process.h"
#include "records/record.h"
#include "target/target.h"

namespace ansor {

struct MeasureOptions {
  BuildOptions build;
  double min_seconds = 0.1;          // timed calls of a candidate add up to at least this
  double run_timeout_seconds = 10;   // a candidate that takes longer is a run timeout
  // A candidate whose first timed call is more than this many times slower than the best time
  // known for its workload is timed by that call alone (its record stays valid); 0: never.
  double early_stop_factor = 10;
  std::string worker_path;           // the ansor-measure-worker executable
  std::string lock_dir = "/tmp";     // where the per-target measurement lock lives
  // Builds the naive reference programs for the host CPU with the host's kernel compiler (a GPU
  // target's backend sets it, so that GPU candidates are checked against the CPU); null: with
  // the candidates' own builder.
  const CodeGenerator* reference_generator = nullptr;
  // Candidates whose program was measured before by this measurer get that measurement (its
  // time, a compile error, a crash or a wrong result).
  bool reuse_programs = false;
};

class Measurer : public CandidateMeasurer {
 public:
  // Measures with `generator`, the code generator of the target's kind (its backend's).
  Measurer(KernelCompiler compiler, Target target, const CodeGenerator& generator, MeasureOptions options);
  ~Measurer() override;

  // One record per candidate, in order. Candidates must all schedule the same DAG. Each record
  // is also handed to on_record as soon as it is complete (so that it can be saved before the
  // rest of the batch runs). best_seconds is the best time known for the workload (0: none);
  // with the batch's own best times it decides which candidates stop early.
  std::vector<Record> measure(const std::vector<Candidate>& candidates, double best_seconds = 0,
                              const std::function<void(const Record&)>& on_record = {}) override;

  const Target& target() const override { return target_; }
  const KernelCompiler& compiler() const override { return builder_.compiler(); }
  double build_seconds() const override { return builder_.seconds(); }
  double codegen_seconds() const override { return builder_.codegen_seconds(); }
  double build_cpu_seconds() const override { return builder_.cpu_seconds(); }
  int reused() const override { return reused_; }
  // With reuse_programs: lowers and prints the candidate (no compile) to look its program up.
  std::optional<std::string> new_program(const Candidate& candidate) override;
  double run_seconds() const override { return run_seconds_; }
  // Total time measure() waited for another process to release the measurement lock.
  double lock_wait_seconds() const override { return lock_wait_seconds_; }
  int built() const { return builder_.built(); }

 private:
  struct Reference {
    std::string library, symbol;
    double tolerance = 0;
  };
  void run_candidate(const Candidate& c, const BuildResult& built, double best_seconds, Record& record);
  // The record of a candidate whose program was measured as `measured`.
  void copy_measurement(const Candidate& c, const Record& measured, Record& r);
  const Reference* reference_for(const Candidate& c, std::string& error);
  bool prepare(const std::string& workload, const Reference& ref, std::string& error);

  Builder builder_;
  // Builds the naive reference programs: builder_ itself, or one for the host CPU
  // (MeasureOptions::reference_generator).
  std::unique_ptr<Builder> reference_builder_;
  Target target_;
  MeasureOptions options_;
  LineProcess worker_;
  std::map<std::string, Reference> references_;
  std::set<std::string> prepared_;  // workloads the running worker holds
  std::map<std::string, Record> programs_;  // with reuse_programs: the reusable record of each measured program (BuildResult::program)
  int reused_ = 0;
  double run_seconds_ = 0;
  double lock_wait_seconds_ = 0;
};

// The program the candidates' outputs are checked against: the naive program with each
// reduction's innermost spatial loop moved inside its reduction loops. It adds the same terms in
// the same order as the naive program, but walks rows instead of columns: the naive program of a
// 4096³ matmul takes a quarter of an hour on one core, this one seconds, which is what lets a
// GPU run check its candidates within its lease.
State reference_state(const std::shared_ptr<const ComputeDAG>& dag);

// Where measurement finds its helpers: the runtime headers and the worker executable, next to
// the running executable when installed, else in the source and build trees.
std::string default_runtime_include();
std::string default_worker_path();

}  // namespace ansor
