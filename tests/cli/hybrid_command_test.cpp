// End to end: `--strategy hybrid --degrees T,P,D` on run and plan, and the
// degrees they refuse (exit 2 naming --degrees); plan files that keep them.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace hybrid_command_test {
namespace {

TEST(HybridCommand, T2P2D2TrainsAsSingleOnTheCpu) {
  const CommandResult result = run_splitscope(
      "run mlp-small --train --strategy hybrid --degrees 2,2,2 --devices 8 --microbatches 2 --schedule 1f1b "
      "--steps 2 --check");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("hybrid t2 p2 d2 over 8 devices"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("sent inside tensor groups"), std::string::npos) << result.out;
}

// The numbers of partitioners' closed form (tests/exec/hybrid_plan_test.cpp):
// 8 all-reduces of 512 B (1 KiB sent each), 4 concats of 40 B; 8 half
// hand-offs of 256 B; nothing between replicas in a forward pass.
TEST(HybridCommand, PlanJsonHasTheDegreesAndTheTrafficOfEachGroup) {
  const CommandResult plan =
      run_splitscope("plan mlp-small --strategy hybrid --degrees 2,2,2 --devices 8 --microbatches 2 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto json = nlohmann::json::parse(plan.out);
  EXPECT_EQ(json["strategy"], "hybrid t2 p2 d2");
  EXPECT_EQ(json["hybrid"]["degrees"], (nlohmann::json{{"tensor", 2}, {"pipeline", 2}, {"data", 2}}));
  EXPECT_EQ(json["hybrid"]["traffic_bytes"],
            (nlohmann::json{{"tensor", 8 * 1024 + 4 * 40}, {"pipeline", 8 * 256}, {"data", 0}}));
  EXPECT_DOUBLE_EQ(json["ideal_bubble"].get<double>(), 1.0 / 3.0);  // (2-1)/(2+2-1): 2 stages, not 8 devices
  const CommandResult tensor = run_splitscope("plan mlp-small --strategy tensor --devices 2 --json");
  ASSERT_EQ(tensor.exit_code, 0) << tensor.err;
  EXPECT_TRUE(nlohmann::json::parse(tensor.out)["hybrid"].is_null());
}

TEST(HybridCommand, BadDegreesAreExitTwoNamingTheOption) {
  const struct {
    const char* line;
    int exit_code;
    const char* message;
  } cases[] = {
      {"plan mlp-small --strategy hybrid --devices 8", 2, "--degrees: hybrid needs its three degrees"},
      {"plan mlp-small --strategy hybrid --devices 8 --degrees 2,4", 2, "--degrees"},
      {"plan mlp-small --strategy hybrid --devices 4 --degrees 2,2,2", 2, "2x2x2 = 8 devices, but --devices is 4"},
      {"plan mlp-small --strategy hybrid --devices 8 --degrees 1,8,1", 2, "use a pipeline degree of at most 6"},
      {"plan mlp-small --strategy tensor --devices 2 --degrees 2,1,1", 2, "--degrees"},
      {"plan mlp-small --strategy hybrid --devices 8 --degrees 2,2,2 --replicas 2", 2, "--replicas"},
      {"run mlp-small --strategy hybrid --devices 8 --degrees 2,2,0 --backend sim --machine h100-nvlink-8", 2,
       "at least 1"},
      {"compare mlp-small --strategies tensor,hybrid --devices 4 --backend sim", 2, "hybrid takes its degrees"},
  };
  for (const auto& c : cases) {
    const CommandResult result = run_splitscope(c.line);
    EXPECT_EQ(result.exit_code, c.exit_code) << c.line << "\n" << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << c.line << "\n" << result.err;
  }
}

TEST(HybridCommand, APlanFileKeepsTheDegreesAndRunsAsTheCommandLine) {
  const std::string dir = fresh_temp_dir("hybrid-out");
  const std::string file = dir + "/p.json";
  const CommandResult written =
      run_splitscope("plan mlp-small --train --strategy hybrid --devices 8 --degrees 2,2,2 --microbatches 2 --out " + file);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const auto strategy = nlohmann::json::parse(read_text_file(file))["strategy"];
  EXPECT_EQ(strategy["degrees"], nlohmann::json({2, 2, 2})) << strategy;
  EXPECT_EQ(strategy["stage_starts"].size(), 2u) << strategy;  // one cut per pipeline stage, pinned
  const std::string sim = " --train --backend sim --machine 8x8-h100-ib";
  const CommandResult direct =
      run_splitscope("run mlp-small --strategy hybrid --devices 8 --degrees 2,2,2 --microbatches 2" + sim);
  const CommandResult replayed = run_splitscope("run mlp-small --plan " + file + sim);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_EQ(replayed.out.substr(replayed.out.find("makespan:"), 40), direct.out.substr(direct.out.find("makespan:"), 40));
  EXPECT_NE(replayed.out.find("hybrid t2 p2 d2 over 8 devices"), std::string::npos) << replayed.out;
  // On the cpu the file's plan trains as single does.
  const CommandResult checked = run_splitscope("run mlp-small --plan " + file + " --train --steps 2 --check");
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_NE(checked.out.find("check: max relative error"), std::string::npos) << checked.out;
}

}  // namespace
}  // namespace hybrid_command_test
}  // namespace splitscope::testing
