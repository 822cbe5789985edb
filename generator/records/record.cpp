// Record serialisation and validation.
#include "records/record.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace ansor {

namespace {

constexpr std::string_view kErrorNames[] = {
#define MEASURE_ERROR(Enum, name) name,
#include "records/measure_error.def"
};

// Strings from records are checked for size and characters: they are matched, printed in
// warnings and stored, never pasted into code, but a cache file must not smuggle terminal
// escapes or megabytes into logs either.
std::string checked_string(const nlohmann::json& j, const char* key, size_t max_size, bool required = true) {
  if (!j.contains(key)) {
    if (required) throw RecordError(fmt::format("missing field '{}'", key));
    return {};
  }
  const nlohmann::json& v = j.at(key);
  if (!v.is_string()) throw RecordError(fmt::format("field '{}' must be a string", key));
  std::string s = v.get<std::string>();
  if (s.size() > max_size) throw RecordError(fmt::format("field '{}' is too long", key));
  for (unsigned char c : s)
    if (c < 0x20 && c != '\n' && c != '\t') throw RecordError(fmt::format("field '{}' holds control characters", key));
  return s;
}

double checked_number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number()) throw RecordError(fmt::format("field '{}' must be a number", key));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw RecordError(fmt::format("field '{}' must be a finite non-negative number", key));
  return d;
}

// A record's steps as a JSON array: the schedule part of its line, and its identity.
nlohmann::json steps_to_json(const Record& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepPtr& s : r.steps) steps.push_back(s->to_json());
  return steps;
}

}  // namespace

std::string_view measure_error_name(MeasureError e) { return kErrorNames[static_cast<int>(e)]; }

std::string record_to_line(const Record& r) {
  nlohmann::json j;
  j["v"] = r.version;
  j["workload"] = r.workload_key;
  j["dag"] = r.dag;
  j["kernel"] = r.kernel;
  j["target"] = r.target;
  j["compiler"] = r.compiler;
  j["steps"] = steps_to_json(r);
  j["result"] = std::string(measure_error_name(r.error));
  if (!r.error_message.empty()) j["message"] = r.error_message;
  if (r.ok()) {
    j["seconds"] = r.seconds;
    j["spread"] = r.spread;
    j["repeats"] = r.repeats;
  }
  if (r.remeasure) j["remeasure"] = true;
  j["generator"] = r.generator_version;
  j["time"] = r.timestamp;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string schedule_key(const Record& r) { return steps_to_json(r).dump(); }

Record record_from_line(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw RecordError("not a JSON object");
  if (!j.contains("v") || !j["v"].is_number_integer()) throw RecordError("no format version");
  Record r;
  r.version = j["v"].get<int>();
  if (r.version != kRecordVersion) throw RecordError(fmt::format("unknown record format version {}", r.version));
  r.workload_key = checked_string(j, "workload", 64);
  r.dag = checked_string(j, "dag", 1 << 20);
  r.kernel = checked_string(j, "kernel", 256, false);
  r.target = checked_string(j, "target", 256);
  r.compiler = checked_string(j, "compiler", 4096);
  r.error_message = checked_string(j, "message", 4096, false);
  r.generator_version = checked_string(j, "generator", 64, false);
  std::string result = checked_string(j, "result", 64);
  bool known = false;
  for (size_t i = 0; i < std::size(kErrorNames); ++i) {
    if (kErrorNames[i] == result) {
      r.error = static_cast<MeasureError>(i);
      known = true;
    }
  }
  if (!known) throw RecordError(fmt::format("unknown result '{}'", result));
  if (!j.contains("steps") || !j["steps"].is_array() || j["steps"].size() > 512) throw RecordError("field 'steps' must be a list");
  try {
    for (const auto& s : j["steps"]) r.steps.push_back(step_from_json(s));
  } catch (const StepError& e) {
    throw RecordError(std::string("bad step: ") + e.what());
  }
  r.seconds = checked_number(j, "seconds");
  r.spread = checked_number(j, "spread");
  r.repeats = static_cast<int>(std::min(checked_number(j, "repeats"), 1e9));
  if (r.ok() && r.seconds <= 0) throw RecordError("a successful record needs a positive time");
  if (j.contains("remeasure")) {
    if (!j["remeasure"].is_boolean()) throw RecordError("field 'remeasure' must be true or false");
    r.remeasure = j["remeasure"].get<bool>();
  }
  if (j.contains("time")) {
    if (!j["time"].is_number_integer()) throw RecordError("field 'time' must be an integer");
    r.timestamp = j["time"].get<int64_t>();
  }
  return r;
}

}  // namespace ansor
