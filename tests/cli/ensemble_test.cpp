// End to end: `splitscope ensemble`, its JSON report (the fields scripts rely
// on), the deadline and straggler options, and its refusals.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace ensemble_test {
namespace {

TEST(EnsembleCommand, AStragglerMissesTheDeadlineAndTheReportSaysSo) {
  const std::string dir = fresh_temp_dir("ensemble");
  const CommandResult result = run_splitscope("ensemble cnn-small cnn-small cnn-small --straggler 2:400 "
                                              "--deadline-ms 200 --repeat 1 -q --report " + dir + "/e.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/e.json"));
  ASSERT_EQ(report["members"].size(), 3u);
  for (int m = 0; m < 3; ++m) {
    const auto& member = report["members"][static_cast<size_t>(m)];
    EXPECT_EQ(member["network"], "cnn-small");
    EXPECT_EQ(member["device"], m);
    EXPECT_EQ(member["used"], m != 2) << m;
  }
  EXPECT_GE(report["members"][2]["latency_ms"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(report["ensemble_latency_ms"].get<double>(), 200.0);
  EXPECT_EQ(report["deadline_ms"], 200.0);
  EXPECT_NE(result.out.find("dropped: missed the 200 ms deadline"), std::string::npos) << result.out;
}

TEST(EnsembleCommand, OnTheSimulatorTwoMembersOnOneDeviceRunInTurn) {
  const std::string dir = fresh_temp_dir("ensemble-sim");
  const CommandResult result = run_splitscope(
      "ensemble mlp-small mlp-small --devices 1 --backend sim --machine h100-nvlink-8 -q --report " + dir + "/e.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/e.json"));
  EXPECT_EQ(report["measured"], false);
  const double alone = report["members"][0]["alone_ms"].get<double>();
  EXPECT_NEAR(report["members"][1]["latency_ms"].get<double>(), 2 * alone, 1e-9);
  EXPECT_NEAR(report["ensemble_latency_ms"].get<double>(), 2 * alone, 1e-9);
  EXPECT_NEAR(report["sequential_ms"].get<double>(), 2 * alone, 1e-9);
}

TEST(EnsembleCommand, RefusesWhatItCannotRunWithExitTwoAndWritesNothing) {
  const std::string dir = fresh_temp_dir("ensemble-refusals");
  for (const std::string args :
       {"ensemble mlp-small", "ensemble mlp-small cnn-small", "ensemble mlp-small mlp-small --straggler 2:10",
        "ensemble mlp-small mlp-small --straggler 1-10", "ensemble mlp-small mlp-small --straggler 0:-5",
        "ensemble mlp-small mlp-small --deadline-ms 0", "ensemble mlp-small mlp-small --devices 3",
        "ensemble mlp-small mlp-small --backend sim", "ensemble mlp-small mlp-small nonesuch",
        // the same batch and output shape, but inputs of another shape
        "ensemble mlp-small cnn-small --batch 4",
        // a deadline of 1e-300 ms printed a speedup of 300 digits; inf is no deadline
        "ensemble mlp-small mlp-small --deadline-ms 1e-300", "ensemble mlp-small mlp-small --deadline-ms inf",
        "ensemble mlp-small mlp-small --deadline-ms nan",
        // 0 was read as the default, one device per member
        "ensemble mlp-small mlp-small --devices 0",
        // an empty item was dropped unseen
        "ensemble mlp-small mlp-small --straggler 1:5,",
        // members that cannot fit are bad input, as a run that cannot is, not "no member answered"
        "ensemble cnn cnn --batch 200000 --backend cpu"}) {
    const CommandResult result = run_splitscope(args + " --report " + dir + "/r.json");
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.out << result.err;
    EXPECT_FALSE(result.err.empty()) << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << args;
  }
}

}  // namespace
}  // namespace ensemble_test
}  // namespace splitscope::testing
