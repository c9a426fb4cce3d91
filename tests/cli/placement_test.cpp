// `--placement default|topology` on `run` and `compare` (issue 18): what the
// reports say of each run's mapping, and the refusals.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace placement_test {
namespace {

const std::string kOnTwoNodes = " --backend sim --machine 2x8-h100-ib --quiet";

TEST(Placement, TheDefaultRunReportsItsMappingAndTheBytesAcrossNodes) {
  const std::string dir = fresh_temp_dir("placement-default");
  const CommandResult result =
      run_splitscope("run mlp --strategy tensor --devices 16" + kOnTwoNodes + " --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("placement:"), std::string::npos) << "the default prints nothing new";
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["placement"], "default");
  ASSERT_EQ(report["device_map"].size(), 16u);
  for (int d = 0; d < 16; ++d) EXPECT_EQ(report["device_map"][d], d);
  // The all-reduce rings cross from device 7 to 8 and from 15 to 0.
  EXPECT_GT(report["cross_node_bytes"].get<int64_t>(), 0);
  EXPECT_TRUE(report["default_placement"].is_null());
}

TEST(Placement, TopologyShowsBothMappingsAndWritesAValidReport) {
  const std::string dir = fresh_temp_dir("placement-topology");
  const CommandResult result = run_splitscope("run mlp --strategy tensor --devices 16" + kOnTwoNodes +
                                              " --placement topology --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("placement: topology"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("(default mapping"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["placement"], "topology");
  EXPECT_EQ(report["device_map"].size(), 16u);
  ASSERT_TRUE(report["default_placement"].is_object()) << report.dump(2).substr(0, 600);
  EXPECT_LE(report["cross_node_bytes"].get<int64_t>(),
            report["default_placement"]["cross_node_bytes"].get<int64_t>());
  EXPECT_GT(report["default_placement"]["makespan_ms"].get<double>(), 0.0);
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the run report does not match src/report/schema";
}

TEST(Placement, CompareTabulatesBothMappingsAndTopologyCutsAGroupedCnnsTraffic) {
  // AlexNet's channel split over 12 devices moves most of its bytes within
  // devices 0-4 and within 5-11, which the default mapping cuts at device 8.
  const std::string dir = fresh_temp_dir("placement-compare");
  const CommandResult result = run_splitscope("compare cnn --devices 12 --strategies vertical" + kOnTwoNodes +
                                              " --placement topology --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("placement topology on 2x8-h100-ib"), std::string::npos) << result.out;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  for (const auto& run : compare["runs"]) {
    EXPECT_EQ(run["placement"], "topology") << run["strategy"];
    EXPECT_TRUE(run["default_placement"].is_object()) << run["strategy"];
    if (run["strategy"] != "vertical") continue;
    const auto& by_default = run["default_placement"];
    EXPECT_LT(run["cross_node_bytes"].get<int64_t>() * 3, by_default["cross_node_bytes"].get<int64_t>());
    EXPECT_LT(run["makespan_ms"]["median"].get<double>() * 2, by_default["makespan_ms"].get<double>());
  }
  const int validated = run_script("validate-report", dir + "/c.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the compare report does not match src/report/schema";
}

TEST(Placement, MeasuredRunsBesideAPlacedPredictionKeepTheirDevices) {
  const std::string dir = fresh_temp_dir("placement-predict");
  const CommandResult result =
      run_splitscope("compare mlp-small --devices 2 --strategies horizontal --backend cpu --repeat 1 --warmup 0 "
                     "--quiet --predict-on 2x8-h100-ib --placement topology --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  EXPECT_EQ(compare["runs"][0]["placement"], "default");
  EXPECT_EQ(compare["runs"][0]["cross_node_bytes"], 0);
  EXPECT_EQ(compare["predicted"][0]["runs"][0]["placement"], "topology");
  // Two devices fit one node: nothing crosses, and the default mapping is kept.
  EXPECT_EQ(compare["predicted"][0]["runs"][0]["cross_node_bytes"], 0);
}

TEST(Placement, OnOneNodeTopologyChangesNothingAndSaysSo) {
  const CommandResult result = run_splitscope(
      "run mlp-small --strategy vertical --devices 2 --backend sim --machine h100-nvlink-8 --placement topology");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("is one node"), std::string::npos) << result.out;
}

TEST(Placement, BadUsesAreExitTwoNamingTheOption) {
  struct Case {
    std::string args;
    std::string words;
  };
  const std::vector<Case> cases{
      {"run mlp-small --strategy vertical --devices 2" + kOnTwoNodes + " --placement nearest", "--placement"},
      {"compare mlp-small --devices 2" + kOnTwoNodes + " --placement Topology", "{default,topology}"},
      {"run mlp-small --strategy vertical --devices 2 --backend cpu --placement topology",
       "--placement: places a plan's devices on a simulated machine's nodes"},
      {"compare mlp-small --devices 2 --backend cpu --predict-on none --placement topology",
       "--placement: places the simulated runs' devices"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args << ": " << result.err;
    EXPECT_NE(result.err.find(c.words), std::string::npos) << c.args << ": " << result.err;
  }
}

}  // namespace
}  // namespace placement_test
}  // namespace splitscope::testing
