// End to end: `--replicas R` (hybrid parallelism) on run and plan.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace replicas_command_test {
namespace {

TEST(ReplicasCommand, TwoTensorReplicasTrainAsSingleAndReportTheirGradientAllReduces) {
  const std::string dir = fresh_temp_dir("replicas");
  const CommandResult result = run_splitscope(
      "run mlp-small --train --strategy tensor --replicas 2 --devices 4 --steps 2 --check --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("tensor x2 over 4 devices"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["strategy"], "tensor x2");
  EXPECT_EQ(report["devices"], 4);
  const CommandResult plan = run_splitscope("plan mlp-small --train --strategy pipeline --replicas 2 --devices 4 -m 2");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("2 replicas of pipeline over 2 devices each"), std::string::npos) << plan.out;
}

TEST(ReplicasCommand, CompareRunsEveryModelSplitAsReplicasBesideDataAndSingle) {
  const std::string dir = fresh_temp_dir("replicas-compare");
  const CommandResult result = run_splitscope(
      "compare mlp-small --train --devices 4 --replicas 2 --strategies tensor,data --backend sim --machine "
      "h100-nvlink-8 --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  std::vector<std::string> strategies;
  for (const auto& run : report["runs"]) strategies.push_back(run["strategy"]);
  std::sort(strategies.begin(), strategies.end());
  EXPECT_EQ(strategies, (std::vector<std::string>{"data", "single", "tensor x2"}));
  EXPECT_EQ(run_splitscope("compare mlp-small --devices 3 --replicas 2 --backend sim --machine h100-nvlink-8").exit_code, 2);
}

TEST(ReplicasCommand, ImpossibleReplicasAreExitTwoAndWriteNothing) {
  const std::string dir = fresh_temp_dir("replicas-refusals");
  for (const std::string args : {"run mlp-small --strategy tensor --replicas 2 --devices 3",
                                 "run mlp-small --strategy data --replicas 2 --devices 4",
                                 "run mlp-small --strategy tensor --replicas 0 --devices 4"}) {
    const CommandResult result = run_splitscope(args + " --report " + dir + "/r.json");
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.err;
    EXPECT_NE(result.err.find("--replicas"), std::string::npos) << args << "\n" << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << args;
  }
}

}  // namespace
}  // namespace replicas_command_test
}  // namespace splitscope::testing
