// Reports this library writes validate against src/report/schema/ (through
// scripts/validate-report, Debian's python3-jsonschema), and the schemas are
// strict enough to reject a missing or mistyped field.

#include <gtest/gtest.h>

#include <tuple>

#include "report/report_json.hpp"
#include "report/reporter.hpp"
#include "report_test_support.hpp"
#include "util/atomic_file.hpp"

namespace splitscope {
namespace schema_test {
namespace {

using Json = nlohmann::ordered_json;

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }

  /// Runs the validator on `files`; skips the test when python3-jsonschema is missing.
  int validate(const std::vector<std::string>& files, std::string* output) {
    std::string command = "/usr/bin/python3 " + testing::source_root() + "/scripts/validate-report";
    for (const std::string& file : files) command += " " + file;
    const int status = testing::run_command(command, output);
    if (status == 77) skipped_ = true;
    return status;
  }

  std::string write(const std::string& name, const Json& json) {
    const std::string path = dir_ + "/" + name;
    write_file_atomically(path, json.dump(2));
    return path;
  }

  std::string dir_;
  bool skipped_ = false;
};

TEST_F(SchemaTest, ReportsWrittenByTheReportersValidate) {
  const Comparison comparison = testing::sample_comparison();
  // What `compare --report` and `run --report` write, through the reporters.
  OutputBatch outputs;
  CompareJsonReporter(dir_ + "/compare.json", outputs).report(comparison);
  RunJsonReporter(dir_ + "/run.json", outputs).report(comparison);
  outputs.publish();
  std::vector<std::string> files{dir_ + "/compare.json", dir_ + "/run.json"};
  // Every run on its own: fits, does not fit, baseline, simulated.
  for (const RunReport* run : comparison.all_runs()) {
    files.push_back(write(run->summary.strategy + "-" + run->summary.info.backend + ".json",
                          run_report_json(*run, &comparison.context)));
  }
  std::string output;
  const int status = validate(files, &output);
  if (skipped_) GTEST_SKIP() << output;
  EXPECT_EQ(status, 0) << output;
}

TEST_F(SchemaTest, AMissingOrMistypedFieldIsRejected) {
  const Comparison comparison = testing::sample_comparison();
  const Json good = run_report_json(comparison.primary().runs[1], &comparison.context);

  Json missing = good;
  missing.erase("critical_path");
  Json mistyped = good;
  mistyped["speedup"] = "0.89";
  Json bad_verdict = good;
  bad_verdict["verdict"] = "draw";
  Json bad_device = good;
  bad_device["per_device"][0].erase("memory_peak_bytes");
  Json inconsistent = good;
  inconsistent["fits"] = false;  // a run that does not fit has no makespan
  Json bad_compare = compare_json(comparison);
  bad_compare["runs"][0]["makespan_ms"]["repeats"] = 0;

  // Each broken copy, and where the validator must say it is broken.
  const std::vector<std::tuple<std::string, Json, std::string>> cases{
      {"missing", missing, "$: 'critical_path' is a required property"},
      {"mistyped", mistyped, "$.speedup: "},
      {"bad_verdict", bad_verdict, "$.verdict: 'draw' is not one of"},
      {"bad_device", bad_device, "$.per_device[0]: 'memory_peak_bytes' is a required property"},
      {"inconsistent", inconsistent, "$.makespan_ms: "},
      {"bad_compare", bad_compare, "$.runs[0].makespan_ms: "}};
  std::vector<std::string> files;
  for (const auto& [name, json, complaint] : cases) files.push_back(write(name + ".json", json));
  std::string output;
  const int status = validate(files, &output);
  if (skipped_) GTEST_SKIP() << output;
  EXPECT_EQ(status, 1) << output;
  for (const auto& [name, json, complaint] : cases) {
    EXPECT_NE(output.find(name + ".json: " + complaint), std::string::npos) << name << ": " << output;
    EXPECT_EQ(output.find(name + ".json: valid"), std::string::npos) << name << ": " << output;
  }
}

}  // namespace
}  // namespace schema_test
}  // namespace splitscope
