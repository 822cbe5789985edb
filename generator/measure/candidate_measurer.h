// What tuning asks of measurement, as an interface: records for a batch of candidates, the
// target and compiler they are measured with, and where the time went. Measurer (measurer.h)
// measures for real; a decorator can wrap it (tests plant faults in candidates that way, to
// check that tuning survives them) without the tuner knowing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "measure/builder.h"
#include "measure/compiler.h"
#include "records/record.h"
#include "target/target.h"

namespace ansor {

class CandidateMeasurer {
 public:
  virtual ~CandidateMeasurer() = default;

  // One record per candidate, in order; the candidates all schedule the same DAG. Each record
  // is handed to on_record (when set) as soon as it is complete. best_seconds is the best time
  // known for the workload (0: none).
  virtual std::vector<Record> measure(const std::vector<Candidate>& candidates, double best_seconds,
                                      const std::function<void(const Record&)>& on_record) = 0;

  virtual const Target& target() const = 0;
  virtual const KernelCompiler& compiler() const = 0;
  // Totals since construction: compiler wall time, time running candidates, and time waiting
  // for another process to release the measurement lock.
  virtual double build_seconds() const = 0;
  virtual double run_seconds() const = 0;
  virtual double lock_wait_seconds() const = 0;
  // Totals since construction: time lowering and printing candidates, the compilers' CPU time,
  // and candidates whose record copies the measurement of the same program (measured before,
  // not again).
  virtual double codegen_seconds() const { return 0; }
  virtual double build_cpu_seconds() const { return 0; }
  virtual int reused() const { return 0; }
  // The identity of the program the candidate lowers to (BuildResult::program), or none when
  // measuring it now would copy an earlier measurement of that program rather than run it. An
  // empty identity: unknown (a measurer that never copies says so of every candidate).
  virtual std::optional<std::string> new_program(const Candidate&) { return std::string(); }
};

}  // namespace ansor
