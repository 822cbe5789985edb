// Records of the repository's cache replay as they always did: a few real records
// (step_records.jsonl, copied from cache/) parse step by step back to the same JSON, and
// replaying them on the DAG each carries gives the same steps and loop nests (bounds inferred)
// as the schedules printed in step_records.txt, written by the generator before steps carried
// their own edits.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "dag/dag_text.h"
#include "schedule/bound_inference.h"
#include "schedule/state.h"
#include "schedule/state_printer.h"
#include "schedule/step.h"
#include "source_file.h"

namespace ansor {
namespace {

TEST(StepRecordsTest, RealRecordsRoundTripAndReplayAsBefore) {
  std::istringstream lines(test::read_source("tests/unit/schedule/step_records.jsonl"));
  std::string line, printed;
  int records = 0;
  while (std::getline(lines, line)) {
    nlohmann::json record = nlohmann::json::parse(line);
    SCOPED_TRACE(record.at("kernel").get<std::string>() + " on " + record.at("target").get<std::string>());
    State state(std::make_shared<const ComputeDAG>(parse_canonical_dag(record.at("dag").get<std::string>())));
    for (const nlohmann::json& j : record.at("steps")) {
      StepPtr step = step_from_json(j);
      EXPECT_EQ(step->to_json(), j);
      state.apply(step);
    }
    infer_bounds(state);
    printed += fmt::format("== {} on {}\n{}{}", record.at("kernel").get<std::string>(), record.at("target").get<std::string>(),
                           describe_steps(state), state_to_string(state));
    ++records;
  }
  EXPECT_EQ(records, 6);
  EXPECT_EQ(printed, test::read_source("tests/unit/schedule/step_records.txt"));
}

}  // namespace
}  // namespace ansor
