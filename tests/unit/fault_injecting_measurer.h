// A decorator of a measurer for tests: it plants faults (compile errors, crashes, hangs, wrong
// results) in chosen candidates, counted across batches from the first candidate it measures,
// and passes everything to the real measurer, so that a test sees how tuning survives faults
// where they really happen: in the compiler and the worker process.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "measure/candidate_measurer.h"

namespace ansor::test {

class FaultInjectingMeasurer : public CandidateMeasurer {
 public:
  // faults: the index of a candidate among all those measured through this decorator, to its
  // fault.
  FaultInjectingMeasurer(CandidateMeasurer& inner, std::map<int, PlantedFault> faults) : inner_(inner), faults_(std::move(faults)) {}

  std::vector<Record> measure(const std::vector<Candidate>& candidates, double best_seconds,
                              const std::function<void(const Record&)>& on_record) override {
    std::vector<Candidate> planted = candidates;
    for (Candidate& c : planted) {
      auto it = faults_.find(measured_++);
      if (it != faults_.end()) c.fault = it->second;
    }
    return inner_.measure(planted, best_seconds, on_record);
  }

  const Target& target() const override { return inner_.target(); }
  const KernelCompiler& compiler() const override { return inner_.compiler(); }
  double build_seconds() const override { return inner_.build_seconds(); }
  double run_seconds() const override { return inner_.run_seconds(); }
  double lock_wait_seconds() const override { return inner_.lock_wait_seconds(); }
  double codegen_seconds() const override { return inner_.codegen_seconds(); }
  double build_cpu_seconds() const override { return inner_.build_cpu_seconds(); }
  int reused() const override { return inner_.reused(); }

 private:
  CandidateMeasurer& inner_;
  std::map<int, PlantedFault> faults_;
  int measured_ = 0;
};

}  // namespace ansor::test
