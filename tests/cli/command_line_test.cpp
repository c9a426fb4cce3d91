// End to end: the command line itself (issue 19): unknown commands, help, and
// options that mean the same on every command.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace command_line_test {
namespace {

constexpr const char* kUnknownVerify =
    "error: unknown command 'verify'; the commands are inspect, plan, run, compare, calibrate, demo, validate, collective, ensemble, sweep, lessons, prices, report, search (run "
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

TEST(CommandLine, AMistypedOptionIsNamedWithTheNearestRealOne) {
  // `--device 2` met only "--devices is required".
  const CommandResult singular = run_splitscope("run mlp-small --strategy single --device 1");
  EXPECT_EQ(singular.exit_code, 2);
  EXPECT_NE(singular.err.find("unknown option --device for run (did you mean --devices?)"), std::string::npos)
      << singular.err;
  const CommandResult typo = run_splitscope("compare mlp-small --devices 2 --stratgies data --backend sim --machine "
                                            "h100-nvlink-8");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown option --stratgies for compare (did you mean --strategies?)"), std::string::npos)
      << typo.err;
  const CommandResult nested = run_splitscope("demo rnn --backend sim --machine h100-nvlink-8 --hiden 64");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("unknown option --hiden for rnn (did you mean --hidden?)"), std::string::npos)
      << nested.err;
  const CommandResult far = run_splitscope("run mlp-small --strategy single --devices 1 --zzzzzz");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.err.find("unknown option --zzzzzz for run; see 'splitscope run --help'"), std::string::npos)
      << far.err;
  // A negative number is a value, not an option.
  const CommandResult negative = run_splitscope("plan mlp-small --strategy single --devices -1");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_EQ(negative.err.find("unknown option"), std::string::npos) << negative.err;
}

TEST(CommandLine, AListWithAnEmptyItemIsRefused) {
  // CLI11 dropped the empty items of `--bytes 1K,,1M` and `--bytes 1K,` unseen.
  for (const std::string bytes : {"1K,,1M", "1K,", ",1K"}) {
    const CommandResult result =
        run_splitscope("collective all-reduce --devices 2 --backend sim --machine h100-nvlink-8 --bytes " + bytes);
    EXPECT_EQ(result.exit_code, 2) << bytes;
    EXPECT_EQ(result.err, "error: command line: --bytes: '" + bytes +
                              "' has an empty item; separate the values by single commas, e.g. --bytes A,B\n");
  }
  const CommandResult equals = run_splitscope("compare mlp-small --devices 2 --strategies=data, --backend sim "
                                              "--machine h100-nvlink-8");
  EXPECT_EQ(equals.exit_code, 2);
  EXPECT_NE(equals.err.find("--strategies: 'data,' has an empty item"), std::string::npos) << equals.err;
}

TEST(CommandLine, HelpSaysWhatTheCommandsDo) {
  const CommandResult demo = run_splitscope("demo rnn --help");
  EXPECT_EQ(demo.out.find("no fused training baseline"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("the fused training loop"), std::string::npos) << demo.out;
  const CommandResult plan = run_splitscope("plan --help");
  EXPECT_NE(plan.out.find("branches"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("ps"), std::string::npos) << plan.out;
  const CommandResult validate = run_splitscope("validate --help");
  EXPECT_EQ(validate.out.find("--machine"), std::string::npos) << validate.out;
  EXPECT_EQ(validate.out.find("cpu | cuda | sim"), std::string::npos) << validate.out;
  const CommandResult calibrate = run_splitscope("calibrate --help");
  EXPECT_EQ(calibrate.out.find("Measure a GPU and"), std::string::npos) << calibrate.out;
  EXPECT_NE(calibrate.out.find("this host's cpu backend"), std::string::npos) << calibrate.out;
  const CommandResult collective = run_splitscope("collective --help");
  EXPECT_EQ(collective.out.find("compare on cpu"), std::string::npos) << collective.out;
  EXPECT_EQ(collective.out.find("--batch"), std::string::npos) << collective.out;
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
