// End to end: `splitscope validate` on the cpu backend, its report, and its refusals.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace validate_test {
namespace {

TEST(ValidateCommand, ScoresEveryStrategyOfEachNetworkAndDeviceCount) {
  const std::string dir = fresh_temp_dir("validate-cpu");
  const CommandResult result = run_splitscope(
      "validate --backend cpu --networks mlp-small --devices 2 --repeat 1 --quiet --predict-on cpu-2 --report " +
      dir + "/v.json --html " + dir + "/v.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("median |error|"), std::string::npos) << result.out;

  const auto report = nlohmann::json::parse(read_text_file(dir + "/v.json"));
  EXPECT_EQ(report["schema"], "splitscope.validate/1");
  EXPECT_EQ(report["backend"], "cpu");
  EXPECT_EQ(report["machine"], "cpu-2");
  EXPECT_FALSE(report.contains("host_speed"));  // cpu-2 has no sgemm grid to hold the host against
  // mlp-small splits five ways on 2 devices, the baseline included.
  const auto& cases = report["cases"];
  ASSERT_EQ(cases.size(), 5u);
  std::vector<double> errors;
  for (const auto& c : cases) {
    EXPECT_EQ(c["network"], "mlp-small");
    EXPECT_EQ(c["devices"], 2);
    const double measured = c["measured_ms"].get<double>();
    const double predicted = c["predicted_ms"].get<double>();
    ASSERT_GT(measured, 0);
    ASSERT_GT(predicted, 0);
    EXPECT_NEAR(c["error"].get<double>(), predicted / measured - 1, 1e-9);
    errors.push_back(std::abs(predicted / measured - 1));
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_NEAR(report["summary"]["median_abs_error"].get<double>(), errors[2], 1e-9);
  EXPECT_NEAR(report["summary"]["max_abs_error"].get<double>(), errors[4], 1e-9);
  ASSERT_EQ(report["groups"].size(), 1u);
  EXPECT_EQ(report["groups"][0]["measured_order"].size(), 5u);
  EXPECT_NE(read_text_file(dir + "/v.html").find("<svg"), std::string::npos);
  const int validated = run_script("validate-report", dir + "/v.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the validate report does not match src/report/schema/validate.schema.json";
}

TEST(ValidateCommand, ProbesTheHostAgainstACpuMachinesGrid) {
  // cpu-2 with a one-thread sgemm grid at 100 GFLOP/s: validate times the host's one-thread sgemm before and
  // after its runs against it. Without a grid (cpu-2 itself, the first test) there is no probe.
  const std::string dir = fresh_temp_dir("validate-host-speed");
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  ASSERT_NE(root, nullptr);
  auto machine = nlohmann::json::parse(read_text_file(std::string(root) + "/models/machines/cpu-2.json"));
  machine["name"] = "cpu-2-with-grid";
  nlohmann::json grid = nlohmann::json::array();
  for (int m : {16, 64, 256}) {
    for (int n : {256, 1024, 4096}) {
      for (int k : {256, 1024}) grid.push_back({{"m", m}, {"n", n}, {"k", k}, {"GFLOPs", 100}});
    }
  }
  machine["device"]["gemm_rates"] = grid;
  std::ofstream(dir + "/machine.json") << machine.dump(2);
  const CommandResult result = run_splitscope("validate --backend cpu --networks mlp-small --devices 2 --repeat 1 "
                                              "--quiet --predict-on " + dir + "/machine.json --report " + dir +
                                              "/v.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("host speed against the machine's calibration"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/v.json"));
  ASSERT_TRUE(report.contains("host_speed")) << report.dump(2);
  EXPECT_GT(report["host_speed"]["before"].get<double>(), 0);
  EXPECT_GT(report["host_speed"]["after"].get<double>(), 0);
}

TEST(ValidateCommand, TheMachineMayNameTheDeviceCount) {
  const std::string dir = fresh_temp_dir("validate-pattern");
  // models/machines has no cpu-3: the pattern is expanded per count, and the
  // missing one is refused before anything runs.
  const CommandResult result = run_splitscope("validate --backend cpu --networks mlp-small --devices 2,3 --repeat 1 "
                                              "--predict-on cpu-{devices} --report " + dir + "/v.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("cpu-3"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/v.json"));
}

TEST(ValidateCommand, ImpossibleRequestsAreBadInputAndWriteNothing) {
  const std::string dir = fresh_temp_dir("validate-bad");
  const std::vector<std::pair<std::string, std::string>> refused{
      {"--backend sim", "--backend"},
      // validate predicts on --predict-on: the shared --machine is not one of its options.
      {"--machine cpu-2", "unknown option --machine for validate"},
      {"--devices 1", "--devices"},
      {"--devices 2,2", "given twice"},
      // a duplicate was measured twice and tied with itself in the rankings
      {"--networks mlp-small,mlp-small", "mlp-small is given twice"},
      {"--strategies data,data", "data is given twice"},
      {"--devices 2,", "has an empty item"},
      {"--predict-on none", "--predict-on"},
      {"--networks no-such-network", "no-such-network"},
      {"--strategies diagonal", "unknown strategy"},
  };
  for (const auto& [args, named] : refused) {
    const CommandResult result =
        run_splitscope("validate --networks mlp-small --repeat 1 " + args + " --report " + dir + "/v.json");
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.err;
    EXPECT_NE(result.err.find(named), std::string::npos) << args << ": " << result.err;
  }
  const CommandResult missing_folder =
      run_splitscope("validate --backend cpu --networks mlp-small --repeat 1 --report " + dir + "/no/v.json");
  EXPECT_EQ(missing_folder.exit_code, 2) << missing_folder.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(ValidateCommand, AGroupThatCannotFitInMemoryIsSkippedBeforeAnythingIsTimed) {
  // A network whose activations alone need far more memory than any host has (batch 2^24 of 4096
  // features: 256 GiB a layer) was found only when its turn to run came, minutes into a validate of the
  // networks before it, which then wrote nothing. Now every group is checked before the first run: this
  // one is skipped, saying why, and the network that fits is measured.
  const std::string dir = fresh_temp_dir("validate-too-big");
  std::ofstream(dir + "/huge.json") << R"({"name": "huge", "batch": 16777216, "input": [4096], "layers": [
      {"type": "dense", "units": 4096, "activation": "relu"}, {"type": "dense", "units": 4096}]})";
  const CommandResult result = run_splitscope("validate --backend cpu --networks mlp-small," + dir +
                                              "/huge.json --devices 2 --repeat 1 --quiet --predict-on cpu-2 "
                                              "--strategies vertical --report " + dir + "/v.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("skipped: " + dir + "/huge.json on 2: "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("a --batch of at most"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/v.json"));
  ASSERT_EQ(report["cases"].size(), 2u) << report.dump(2);  // mlp-small's single and vertical
  for (const auto& c : report["cases"]) EXPECT_EQ(c["network"], "mlp-small");
}

}  // namespace
}  // namespace validate_test
}  // namespace splitscope::testing
