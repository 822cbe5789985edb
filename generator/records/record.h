// Tuning records: one measured schedule of one workload on one target, as one JSON line.
//
// A record holds everything needed to trust and reuse it without the process that wrote it:
// the workload (key and canonical DAG text), the target, the compiler and flags it was built
// with, the steps, the measured times or the error, the generator version and a time stamp.
// Format version kRecordVersion; readers also accept the versions listed in record.cpp.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/step.h"

namespace ansor {

inline constexpr int kRecordVersion = 1;

enum class MeasureError : uint8_t {
#define MEASURE_ERROR(Enum, name) Enum,
#include "records/measure_error.def"
};

std::string_view measure_error_name(MeasureError e);

// A record that cannot be read: malformed, from an unknown format version, or out of range.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Record {
  int version = kRecordVersion;
  std::string workload_key;
  std::string dag;     // canonical text of the ComputeDAG
  std::string kernel;  // the kernel's name where it was tuned (informational)
  std::string target;
  std::string compiler;  // version line and flags (compiler_identity.h)
  std::vector<StepPtr> steps;
  MeasureError error = MeasureError::None;
  std::string error_message;  // first lines of the compiler's or worker's complaint
  double seconds = 0;         // median time of one call
  double spread = 0;          // interquartile range / median of the timed calls
  int repeats = 0;            // timed calls
  // A further measurement of a schedule measured before (the tuner's confirmation of its
  // fastest schedules): not a new trial. A schedule's time is the median of its measurements.
  bool remeasure = false;
  // Not measured: the measurement of an earlier candidate whose schedule lowered to the same
  // program, copied by the measurer (MeasureOptions::reuse_programs). No trial, and never
  // written to a cache (record_to_line leaves it out; the tuner does not append it).
  bool copied = false;
  std::string generator_version;
  int64_t timestamp = 0;  // seconds since the epoch

  bool ok() const { return error == MeasureError::None; }
};

// One line of JSON, without the newline.
std::string record_to_line(const Record& r);
// A schedule's identity among records: its steps, as the text they have in its line.
std::string schedule_key(const Record& r);
// Parses and validates a line (every field's type and range, every step). Throws RecordError.
Record record_from_line(std::string_view line);

}  // namespace ansor
