// Building, running and timing candidates; the device lock; reference results.
#include "measure/measurer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "dag/output_tolerance.h"
#include "ir/expr.h"
#include "records/record_filter.h"
#include "schedule/steps.h"
#include "support/file_lock.h"
#include "support/version.h"

namespace ansor {

namespace {

std::string executable_dir() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

// What a worker that gave no answer means for the candidate it was running.
MeasureError worker_failure_error(const ProcessFailure& failure) {
  return failure.kind == ProcessFailure::Kind::TimedOut ? MeasureError::RunTimeout : MeasureError::Crash;
}

// Whether an outcome is the program's own, to be had again by measuring the program again: a
// time limit hit on a busy machine, or a worker or reference that failed, may not be.
bool outcome_of_the_program(MeasureError error) {
  return error == MeasureError::None || error == MeasureError::CompileError || error == MeasureError::Crash ||
         error == MeasureError::WrongResult;
}

}  // namespace

std::string default_runtime_include() {
  std::filesystem::path installed = std::filesystem::path(executable_dir()) / ".." / "include";
  if (std::filesystem::exists(installed / "ansor" / "kernel_support.h")) return std::filesystem::weakly_canonical(installed).string();
  return ANSOR_SOURCE_RUNTIME_INCLUDE;
}

State reference_state(const std::shared_ptr<const ComputeDAG>& dag) {
  State s(dag);
  for (int i = 0; i < s.num_stages(); ++i) {
    const Stage& st = s.stage(i);
    if (st.is_placeholder() || !st.op->reduction()) continue;
    std::vector<int> spatial, reduce;
    for (int p = 0; p < static_cast<int>(st.leaves.size()); ++p) (st.leaf(p).kind == IterKind::Spatial ? spatial : reduce).push_back(p);
    if (spatial.size() < 2 || reduce.empty() || st.leaf(spatial.back()).extent == 1) continue;
    std::vector<int> order(spatial.begin(), spatial.end() - 1);
    order.insert(order.end(), reduce.begin(), reduce.end());
    order.push_back(spatial.back());
    s.try_apply(std::make_shared<ReorderStep>(i, order));
  }
  return s;
}

std::string default_worker_path() {
  if (const char* env = std::getenv("ANSOR_MEASURE_WORKER")) return env;
  return (std::filesystem::path(executable_dir()) / "ansor-measure-worker").string();
}

Measurer::Measurer(KernelCompiler compiler, Target target, const CodeGenerator& generator, MeasureOptions options)
    : builder_(std::move(compiler), target, generator, options.build),
      target_(std::move(target)),
      options_(std::move(options)),
      worker_({options_.worker_path, "--threads", std::to_string(target_.threads)}) {}

Measurer::~Measurer() {
  worker_.stop();
  std::error_code ec;
  std::filesystem::remove_all(options_.build.work_dir, ec);
}

const Measurer::Reference* Measurer::reference_for(const Candidate& c, std::string& error) {
  const ComputeDAG& dag = c.state.dag();
  auto it = references_.find(dag.workload_key());
  if (it != references_.end()) return &it->second;
  Candidate naive{c.kernel_name, reference_state(c.state.dag_ptr())};
  if (options_.reference_generator && !reference_builder_) {
    BuildOptions host = options_.build;
    host.work_dir = (std::filesystem::path(options_.build.work_dir) / "reference").string();
    reference_builder_ = std::make_unique<Builder>(make_kernel_compiler(), Target{}, *options_.reference_generator, host);
  }
  BuildResult built = (reference_builder_ ? *reference_builder_ : builder_).build({naive})[0];
  if (built.error != MeasureError::None) {
    error = "the reference program did not build: " + built.message;
    return nullptr;
  }
  return &(references_[dag.workload_key()] = {built.library, built.symbol, output_tolerance(dag)});
}

bool Measurer::prepare(const std::string& workload, const Reference& ref, std::string& error) {
  if (worker_.running() && prepared_.count(workload)) return true;
  if (!worker_.running()) prepared_.clear();
  // The reference's outputs are kept in the work directory: a worker restarted after a crash
  // or a timeout reads them instead of running the naive program again.
  std::string outputs_file = (std::filesystem::path(options_.build.work_dir) / ("reference-" + workload + ".bin")).string();
  nlohmann::json req{{"op", "prepare"}, {"library", ref.library}, {"symbol", ref.symbol}, {"workload", workload}, {"seed", 1},
                     {"outputs_file", outputs_file}};
  // The reference is the naive program: give it time.
  ProcessFailure failure;
  std::optional<std::string> answer = worker_.request(req.dump(), std::max(600.0, options_.run_timeout_seconds), failure);
  if (!answer) {
    error = "the measurement worker " + failure.message;
    return false;
  }
  nlohmann::json a = nlohmann::json::parse(*answer, nullptr, false);
  if (a.is_discarded() || a.value("result", "") != "ok") {
    error = a.is_discarded() ? "unreadable answer" : a.value("message", "the reference failed");
    return false;
  }
  prepared_.insert(workload);
  return true;
}

std::vector<Record> Measurer::measure(const std::vector<Candidate>& candidates, double best_seconds,
                                      const std::function<void(const Record&)>& on_record) {
  // One process measures on a target at a time; without the lock, measurements would disturb
  // each other, so failing to take it is an error.
  auto lock_start = std::chrono::steady_clock::now();
  LockedFile lock((std::filesystem::path(options_.lock_dir) / ("ansor-measure-" + target_.file_stem() + ".lock")).string(),
                  O_RDWR | O_CREAT, LockedFile::Mode::Exclusive, 0666);
  lock_wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - lock_start).count();
  std::vector<Record> records(candidates.size());
  if (candidates.empty()) return records;
  // Programs printed earlier in the batch count as known too: their records are made first,
  // and whatever their outcome, the batch's later candidates of the program share it.
  std::map<std::string, Record> batch_programs;
  KnownProgram known;
  if (options_.reuse_programs)
    known = [&](const std::string& program) { return programs_.count(program) > 0 || !batch_programs.emplace(program, Record{}).second; };
  std::vector<BuildResult> built = builder_.build(candidates, known);
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& program = built[i].program;
    if (options_.reuse_programs && !candidates[i].remeasure && !program.empty() && built[i].library.empty()) {
      auto earlier = programs_.find(program);
      copy_measurement(candidates[i], earlier != programs_.end() ? earlier->second : batch_programs.at(program), records[i]);
    } else {
      run_candidate(candidates[i], built[i], best_seconds, records[i]);
      if (options_.reuse_programs && !program.empty()) {
        batch_programs[program] = records[i];
        if (outcome_of_the_program(records[i].error)) programs_.emplace(program, records[i]);
      }
    }
    if (!result_rejection(records[i]) && (best_seconds <= 0 || records[i].seconds < best_seconds)) best_seconds = records[i].seconds;
    if (on_record) on_record(records[i]);
  }
  run_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const BuildResult& b : built) {
    std::error_code ec;
    if (!b.library.empty()) std::filesystem::remove(b.library, ec);
  }
  return records;
}

std::optional<std::string> Measurer::new_program(const Candidate& candidate) {
  if (!options_.reuse_programs || candidate.remeasure) return std::string();
  std::string program = builder_.program_of(candidate);
  if (!program.empty() && programs_.count(program)) return std::nullopt;
  return program;
}

void Measurer::copy_measurement(const Candidate& c, const Record& measured, Record& r) {
  ++reused_;
  r = measured;
  r.copied = true;
  r.kernel = c.kernel_name;
  r.steps = c.state.steps();
  r.timestamp = static_cast<int64_t>(std::time(nullptr));
}

void Measurer::run_candidate(const Candidate& c, const BuildResult& built, double best_seconds, Record& r) {
  const ComputeDAG& dag = c.state.dag();
  r.workload_key = dag.workload_key();
  r.dag = dag.canonical_text();
  r.kernel = c.kernel_name;
  r.target = target_.to_string();
  r.compiler = builder_.compiler().identity();
  r.steps = c.state.steps();
  r.generator_version = kGeneratorVersion;
  r.timestamp = static_cast<int64_t>(std::time(nullptr));
  r.error = built.error;
  r.error_message = built.message;
  if (r.error != MeasureError::None) return;
  std::string error;
  const Reference* ref = reference_for(c, error);
  if (!ref || !prepare(r.workload_key, *ref, error)) {
    r.error = MeasureError::RunError;
    r.error_message = error;
    return;
  }
  nlohmann::json req{{"op", "measure"},  {"library", built.library}, {"symbol", built.symbol}, {"workload", r.workload_key},
                     {"min_seconds", options_.min_seconds}, {"tolerance", ref->tolerance}};
  if (options_.early_stop_factor > 0 && best_seconds > 0) req["stop_seconds"] = options_.early_stop_factor * best_seconds;
  ProcessFailure failure;
  std::optional<std::string> answer = worker_.request(req.dump(), options_.run_timeout_seconds, failure);
  if (!answer) {
    r.error = worker_failure_error(failure);
    r.error_message = "the measurement worker " + failure.message;
    return;
  }
  nlohmann::json a = nlohmann::json::parse(*answer, nullptr, false);
  std::string result = a.is_discarded() ? "run_error" : a.value("result", "run_error");
  if (result == "ok") {
    r.seconds = a.value("seconds", 0.0);
    r.spread = a.value("spread", 0.0);
    r.repeats = a.value("repeats", 0);
  } else {
    r.error = result == "wrong_result" ? MeasureError::WrongResult : MeasureError::RunError;
    r.error_message = a.is_discarded() ? "unreadable answer" : a.value("message", "");
  }
}

}  // namespace ansor
