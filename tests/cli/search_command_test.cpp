// `splitscope search` and `--plan FILE` from the command line: the searched
// plan runs with the time the search predicted, a plan file round-trips
// through run, and a plan for another network or device count is exit 2.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace search_command_test {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("splitscope_search_test_" + name)).string();
}

/// The "makespan: ..." line of a run's text output.
std::string makespan_line(const std::string& out) {
  const size_t at = out.find("makespan: ");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

TEST(SearchCommand, TheSearchedPlanRunsInThePredictedTime) {
  const std::string file = temp_path("best.json");
  const CommandResult search =
      run_splitscope("search mlp-small --devices 4 --machine h100-nvlink-8 --train --out " + file);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NE(search.out.find("best: "), std::string::npos) << search.out;
  EXPECT_NE(search.out.find("Pareto front"), std::string::npos) << search.out;
  std::ifstream in(file);
  const auto plan = nlohmann::json::parse(in);
  EXPECT_EQ(plan["schema"], "splitscope.plan/1");
  EXPECT_EQ(plan["network"]["name"], "mlp-small");
  EXPECT_EQ(plan["devices"], 4);
  const double predicted_us = plan["predicted"]["makespan_us"].get<double>();
  const CommandResult run =
      run_splitscope("run mlp-small --plan " + file + " --train --backend sim --machine h100-nvlink-8 --report " +
                     file + ".report.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream report_in(file + ".report.json");
  const auto report = nlohmann::json::parse(report_in);
  EXPECT_NEAR(report["makespan_ms"]["median"].get<double>() * 1000, predicted_us, 1e-6 * predicted_us)
      << report["makespan_ms"].dump();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".report.json");
}

TEST(SearchCommand, APlanFileRunsAsTheCommandLineThatMadeIt) {
  const std::string file = temp_path("pipeline.json");
  const std::string options = "--strategy pipeline --devices 4 --replicas 2 --microbatches 2 --train --schedule 1f1b";
  ASSERT_EQ(run_splitscope("plan cnn-small " + options + " --out " + file).exit_code, 0);
  // `plan` balanced the stages by the roofline; the file pins the cuts it got,
  // which a run on a machine (balancing by its own op times) is given here.
  std::ifstream in(file);
  const auto plan = nlohmann::json::parse(in);
  const auto starts = plan["strategy"]["stage_starts"].get<std::vector<int>>();
  ASSERT_EQ(starts.size(), size_t{2});
  const std::string stages = " --stages 0," + std::to_string(starts[1]);
  const CommandResult direct =
      run_splitscope("run cnn-small " + options + stages + " --backend sim --machine h100-nvlink-8");
  const CommandResult from_file =
      run_splitscope("run cnn-small --plan " + file + " --train --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_FALSE(makespan_line(direct.out).empty());
  EXPECT_EQ(makespan_line(from_file.out), makespan_line(direct.out));
  std::filesystem::remove(file);
}

TEST(SearchCommand, APlanFileKeepsItsPrecision) {
  // An amp plan read back runs at amp (its bytes and the machine's bf16
  // peak), as the command line that made it does; another --precision is refused.
  const std::string file = temp_path("amp.json");
  const std::string options = "--strategy data --devices 2 --train --precision amp";
  ASSERT_EQ(run_splitscope("plan mlp-small " + options + " --out " + file).exit_code, 0);
  std::ifstream in(file);
  EXPECT_EQ(nlohmann::json::parse(in)["strategy"]["precision"], "amp");
  const CommandResult direct = run_splitscope("run mlp-small " + options + " --backend sim --machine h100-nvlink-8");
  const CommandResult from_file =
      run_splitscope("run mlp-small --plan " + file + " --train --backend sim --machine h100-nvlink-8");
  const CommandResult at_fp32 =
      run_splitscope("run mlp-small --strategy data --devices 2 --train --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  ASSERT_EQ(at_fp32.exit_code, 0) << at_fp32.err;
  EXPECT_FALSE(makespan_line(direct.out).empty());
  EXPECT_EQ(makespan_line(from_file.out), makespan_line(direct.out));
  EXPECT_NE(makespan_line(at_fp32.out), makespan_line(direct.out)) << "amp must price differently from fp32";
  const CommandResult contradicted = run_splitscope("run mlp-small --plan " + file +
                                                    " --train --precision bf16 --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(contradicted.exit_code, 2);
  EXPECT_NE(contradicted.err.find("holds a plan at amp; drop --precision"), std::string::npos) << contradicted.err;
  std::filesystem::remove(file);
}

TEST(SearchCommand, APlanForAnotherNetworkOrDeviceCountIsExitTwoNamingWhatDiffers) {
  const std::string file = temp_path("tensor.json");
  ASSERT_EQ(run_splitscope("plan mlp-small --strategy tensor --devices 2 --out " + file).exit_code, 0);
  const CommandResult network = run_splitscope("run cnn-small --plan " + file + " --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(network.exit_code, 2);
  EXPECT_NE(network.err.find("network: the plan is for mlp-small, not cnn-small"), std::string::npos) << network.err;
  const CommandResult devices =
      run_splitscope("run mlp-small --plan " + file + " --devices 4 --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.err.find("devices: the plan is for 2 devices, not 4"), std::string::npos) << devices.err;
  const CommandResult both = run_splitscope("run mlp-small --plan " + file + " --strategy data");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--strategy: comes from the plan file"), std::string::npos) << both.err;
  const CommandResult compared =
      run_splitscope("compare mlp-small --plan " + file + " --backend sim --machine h100-nvlink-8 --strategies tensor");
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("plan: tensor"), std::string::npos) << compared.out;
  std::filesystem::remove(file);
}

TEST(SearchCommand, BadInputIsExitTwo) {
  const CommandResult objective = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --objective fast");
  EXPECT_EQ(objective.exit_code, 2);
  EXPECT_NE(objective.err.find("--objective: must be time, throughput or memory"), std::string::npos) << objective.err;
  const CommandResult devices = run_splitscope("search mlp-small --devices 9 --machine h100-nvlink-8");
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.err.find("h100-nvlink-8 has 8 devices"), std::string::npos) << devices.err;
  const CommandResult schedule =
      run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --train --schedule 1f1b");
  EXPECT_EQ(schedule.exit_code, 2);
  const CommandResult budget = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --budget-s 0");
  EXPECT_EQ(budget.exit_code, 2);
  const CommandResult stages = run_splitscope("plan mlp-small --strategy tensor --devices 2 --stages 0,3");
  EXPECT_EQ(stages.exit_code, 2);
}

TEST(SearchCommand, NothingFittingIsAFailureWithNoFile) {
  const std::string file = temp_path("none.json");
  std::filesystem::remove(file);
  const CommandResult result = run_splitscope("search mlp --devices 2 --machine h100-nvlink-8 --memory-limit 0.001 --out " + file);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no plan of mlp over 2 devices fits"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(SearchCommand, CompareWithSearchRunsTheSearchedPlanBesideTheNamedOnes) {
  const CommandResult result =
      run_splitscope("compare mlp-small --devices 4 --train --backend sim --machine h100-nvlink-8 --with-search");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("search: "), std::string::npos) << result.out;
  const CommandResult unpriced = run_splitscope("compare mlp-small --devices 2 --backend cpu --predict-on none --with-search");
  EXPECT_EQ(unpriced.exit_code, 2);
}

}  // namespace
}  // namespace search_command_test
}  // namespace splitscope::testing
