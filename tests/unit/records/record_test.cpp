// Tuning records: JSON lines that round-trip, and validation that rejects malformed, foreign
// and hostile lines.
#include "records/record.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schedule/steps.h"

namespace ansor {
namespace {

Record sample() {
  Record r;
  r.workload_key = "0123456789abcdef0123456789abcdef";
  r.dag = "T0 = input f32[4]\nT1[i0:4] = f32(T0[i0] * 2.0)\noutputs T1\n";
  r.kernel = "double_it";
  r.target = "cpu:x86_64:rocketlake:avx512:t2";
  r.compiler = "clang++ (Debian clang version 14.0.6) -O3 -march=native";
  r.steps = {std::make_shared<SplitStep>(1, 0, std::vector<int64_t>{2}),
             std::make_shared<AnnotateStep>(1, 1, IterAnnotation::Vectorize)};
  r.seconds = 1.5e-6;
  r.spread = 0.03;
  r.repeats = 1000;
  r.generator_version = "0.1.0";
  r.timestamp = 1790000000;
  return r;
}

TEST(RecordTest, RoundTripsThroughOneLine) {
  Record r = sample();
  std::string line = record_to_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  Record back = record_from_line(line);
  EXPECT_EQ(back.workload_key, r.workload_key);
  EXPECT_EQ(back.dag, r.dag);
  EXPECT_EQ(back.target, r.target);
  EXPECT_EQ(back.compiler, r.compiler);
  ASSERT_EQ(back.steps.size(), 2u);
  EXPECT_EQ(back.steps[0]->to_json(), r.steps[0]->to_json());
  EXPECT_DOUBLE_EQ(back.seconds, r.seconds);
  EXPECT_EQ(back.repeats, 1000);
  EXPECT_TRUE(back.ok());
  EXPECT_EQ(record_to_line(back), line);
}

TEST(RecordTest, AConfirmationIsMarkedAndOnlyIt) {
  Record r = sample();
  EXPECT_EQ(record_to_line(r).find("remeasure"), std::string::npos);  // the lines of trials are as before
  EXPECT_FALSE(record_from_line(record_to_line(r)).remeasure);
  r.remeasure = true;
  EXPECT_TRUE(record_from_line(record_to_line(r)).remeasure);
}

TEST(RecordTest, FailedRecordsKeepTheirErrorAndMessage) {
  Record r = sample();
  r.error = MeasureError::Crash;
  r.error_message = "killed by signal 11";
  Record back = record_from_line(record_to_line(r));
  EXPECT_EQ(back.error, MeasureError::Crash);
  EXPECT_EQ(back.error_message, "killed by signal 11");
  EXPECT_FALSE(back.ok());
}

TEST(RecordTest, RejectsWhatIsNotARecord) {
  std::string good = record_to_line(sample());
  auto with = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json::parse(good);
    j[key] = value;
    return j.dump();
  };
  auto without = [&](const std::string& key) {
    nlohmann::json j = nlohmann::json::parse(good);
    j.erase(key);
    return j.dump();
  };
  const std::string bad[] = {
      "", "not json", "[1,2,3]", good.substr(0, good.size() / 2),
      with("v", 99),                                   // a future format
      with("v", "1"),
      without("workload"), without("steps"), without("result"),
      with("result", "excellent"),
      with("seconds", -1.0), with("seconds", 0.0),     // an ok record needs a time
      with("workload", std::string(200, 'a')),
      with("kernel", "evil\x1b[2J"),                   // terminal escapes
      with("steps", nlohmann::json::array({{{"kind", "split"}, {"stage", 0}}})),
      with("steps", nlohmann::json::array({{{"kind", "annotate"}, {"stage", 0}, {"iter", 0}, {"annotation", "}; system(\"x\"); {"}}})),
      with("time", 1.5),
      with("remeasure", "yes"),
  };
  for (const std::string& line : bad) EXPECT_THROW(record_from_line(line), RecordError) << line;
}

}  // namespace
}  // namespace ansor
