// End to end: the command line itself (issue 19): unknown commands, help, and
// options that mean the same on every command.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace command_line_test {
namespace {

constexpr const char* kUnknownVerify =
    "error: unknown command 'verify'; the commands are inspect, plan, run, compare, calibrate, demo, validate, collective, ensemble, sweep, lessons, prices, report (run "
    "'splitscope --help')\n";

TEST(CommandLine, UnknownCommandIsExitTwoAndListsTheCommands) {
  const CommandResult result = run_splitscope("verify mlp-small");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, kUnknownVerify);
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(CommandLine, HelpAfterAnUnknownCommandIsNotTheTopLevelHelp) {
  for (const char* args : {"verify --help", "verify -h", "--help verify"}) {
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 2) << args;
    EXPECT_EQ(result.err, kUnknownVerify) << args;
    EXPECT_TRUE(result.out.empty()) << args << ": " << result.out;
  }
}

TEST(CommandLine, KnownCommandsStillHelp) {
  const CommandResult top = run_splitscope("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("inspect"), std::string::npos) << top.out;
  const CommandResult plan = run_splitscope("plan --help");
  EXPECT_EQ(plan.exit_code, 0);
  EXPECT_NE(plan.out.find("--batch"), std::string::npos) << plan.out;
}

TEST(CommandLine, PlanRequiresStrategyAndDevicesAsItsUsageSays) {
  const CommandResult no_strategy = run_splitscope("plan mlp-small");
  EXPECT_EQ(no_strategy.exit_code, 2);
  EXPECT_NE(no_strategy.err.find("--strategy is required"), std::string::npos) << no_strategy.err;
  const CommandResult no_devices = run_splitscope("plan mlp-small --strategy single");
  EXPECT_EQ(no_devices.exit_code, 2);
  EXPECT_NE(no_devices.err.find("--devices is required"), std::string::npos) << no_devices.err;
}

TEST(CommandLine, PlanTakesBatchLikeRun) {
  const CommandResult result = run_splitscope("plan mlp-small --strategy single --devices 1 --batch 32 --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // mlp-small: 4 × dense 64 + dense 10, FLOPs 2·32·(4·64·64 + 64·10) at batch 32.
  const auto doc = nlohmann::json::parse(result.out);
  EXPECT_EQ(doc["per_device"][0]["flops"].get<int64_t>(), 2 * 32 * (4 * 64 * 64 + 64 * 10));
  const CommandResult zero = run_splitscope("plan mlp-small --strategy single --devices 1 --batch 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "error: --batch: must be positive, got 0\n");
}

}  // namespace
}  // namespace command_line_test
}  // namespace splitscope::testing
