// End to end: `splitscope compare`, its reports, its page, and the classic lessons.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope::testing {
namespace compare_test {
namespace {

/// The run of `strategy` in a compare report's `runs`.
const nlohmann::json& run_of(const nlohmann::json& compare, const std::string& strategy) {
  for (const auto& run : compare["runs"]) {
    if (run["strategy"] == strategy) return run;
  }
  throw std::runtime_error("no run of " + strategy);
}

TEST(CompareCommand, DefaultBackendCompareWritesValidReportAndPage) {
  const std::string dir = fresh_temp_dir("compare-cpu");
  const CommandResult result = run_splitscope("compare mlp-small --devices 2 --repeat 2 --quiet --report " + dir +
                                              "/c.json --html " + dir + "/c.html --trace " + dir + "/t.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("best first"), std::string::npos) << result.out;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  EXPECT_EQ(compare["schema"], "splitscope.compare/1");
  // Every strategy that applies to mlp-small on 2 devices was run, on cuda where a GPU is present, else cpu.
  const std::string expected_backend = cuda_gpu_available() ? "cuda" : "cpu";
  for (const char* strategy : {"single", "horizontal", "pipeline", "vertical", "tensor"}) {
    EXPECT_EQ(run_of(compare, strategy)["backend"], expected_backend) << strategy;
  }
  EXPECT_TRUE(compare["best"].is_string());
  const int validated = run_script("validate-report", dir + "/c.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the compare report does not match src/report/schema";
  const int rendered = run_script("html-screenshot", dir + "/c.html " + dir + "/c.png");
  if (rendered == kSkipExitCode) GTEST_SKIP() << "chromium is not installed (scripts/setup installs it)";
  EXPECT_EQ(rendered, 0) << "the HTML page rendered blank or not at all";
}

/// Speedups of `compare mlp --backend sim` on `machine` with 4 devices.
nlohmann::json simulated_mlp(const std::string& machine) {
  const std::string dir = fresh_temp_dir("compare-" + machine);
  const CommandResult result = run_splitscope("compare mlp --devices 4 --backend sim --machine " + machine +
                                              " --quiet --report " + dir + "/c.json");
  if (result.exit_code != 0) throw std::runtime_error(result.err);
  return nlohmann::json::parse(read_text_file(dir + "/c.json"));
}

TEST(CompareCommand, TheFullyConnectedLessons) {
  const auto nvlink = simulated_mlp("h100-nvlink-8");
  const auto pcie = simulated_mlp("h100-pcie-4");
  // A layer split of a fully connected net gains nothing: the devices take turns.
  for (const auto* compare : {&nvlink, &pcie}) {
    EXPECT_NE(run_of(*compare, "horizontal")["verdict"], "wins");
    EXPECT_LT(run_of(*compare, "horizontal")["speedup"].get<double>(), 1.05);
  }
  // The neuron split all-gathers every layer: it fares worse behind PCIe than over NVLink.
  const double vertical_nvlink = run_of(nvlink, "vertical")["speedup"].get<double>();
  const double vertical_pcie = run_of(pcie, "vertical")["speedup"].get<double>();
  EXPECT_LT(vertical_pcie, vertical_nvlink);
  EXPECT_GT(run_of(pcie, "vertical")["per_device"][0]["transfer_ms"].get<double>(),
            run_of(nvlink, "vertical")["per_device"][0]["transfer_ms"].get<double>());
}

TEST(CompareCommand, GroupedCnnSplitsCleanly) {
  // AlexNet on 2 devices: the channel split moves data only at conv3 and the dense head.
  const std::string dir = fresh_temp_dir("compare-cnn");
  const CommandResult result = run_splitscope("compare cnn --devices 2 --backend sim --machine h100-nvlink-8 "
                                              "--strategies vertical --quiet --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  EXPECT_EQ(run_of(compare, "vertical")["verdict"], "wins") << run_of(compare, "vertical")["reason"];
}

TEST(CompareCommand, PredictionBesideTheMeasuredRuns) {
  const std::string dir = fresh_temp_dir("compare-predict");
  const CommandResult result = run_splitscope("compare mlp-small --devices 2 --repeat 1 --warmup 0 --quiet "
                                              "--strategies horizontal --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("predicted on h100-nvlink-8"), std::string::npos) << result.out;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  ASSERT_TRUE(compare.contains("predicted")) << compare.dump(2).substr(0, 400);
}

TEST(CompareCommand, BadOptionsAreExitTwoNamingTheOption) {
  const std::string sim = "compare mlp-small --backend sim --machine h100-nvlink-8 --quiet ";
  struct Case {
    std::string args;
    std::string words;
  };
  const std::vector<Case> cases{
      {"compare mlp-small --strategies vertical,diagonal", "--strategies: unknown strategy 'diagonal'"},
      // mlp-small's widest split is vertical over its 10 output classes.
      {sim + "--devices 1000", "--devices: no strategy can split mlp-small over 1000 devices (at most 10)"},
      {sim + "--predict-on a100-nvlink-8", "--predict-on: adds a prediction beside measured runs"},
      {"compare mlp-small --backend cpu --predict-on no-such-machine", "no-such-machine"},
      {sim + "--timeout-ms 5", "--timeout-ms: applies to measured runs"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args << ": " << result.err;
    EXPECT_NE(result.err.find(c.words), std::string::npos) << c.args << ": " << result.err;
  }
}

TEST(CompareCommand, EachStrategyRunsOnceWithSingleFirst) {
  const std::string dir = fresh_temp_dir("compare-once");
  const CommandResult result = run_splitscope(
      "compare mlp-small --backend sim --machine h100-nvlink-8 --quiet --strategies vertical,single,vertical "
      "--report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto compare = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  std::vector<std::string> strategies;
  for (const auto& run : compare["runs"]) strategies.push_back(run["strategy"]);
  EXPECT_EQ(strategies, (std::vector<std::string>{"single", "vertical"}));
}

}  // namespace
}  // namespace compare_test
}  // namespace splitscope::testing
