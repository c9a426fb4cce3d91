// End to end: input that was misread, blamed on the wrong thing, or silently
// accepted (issue 19, finding 6). Each is now exit 2 naming what is wrong.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace misleading_input_test {
namespace {

struct Case {
  std::string args;
  std::string err;  ///< the whole of stderr
};

void expect_bad_input(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args;
    EXPECT_EQ(result.err, c.err) << c.args;
    EXPECT_TRUE(result.out.empty()) << c.args << ": " << result.out;
  }
}

TEST(MisleadingInput, BranchesOnAResidualNetworkSaysItsSkipsHoldNoLayer) {
  // It said "has no fork: every layer depends on the one before it" of a network with skip connections.
  const CommandResult residual = run_splitscope("plan residual-small --strategy branches --devices 2");
  EXPECT_EQ(residual.exit_code, 2);
  EXPECT_NE(residual.err.find("residual-small has forks, but each has one branch of layers"), std::string::npos)
      << residual.err;
  const CommandResult chain = run_splitscope("plan mlp-small --strategy branches --devices 2");
  EXPECT_EQ(chain.exit_code, 2);
  EXPECT_NE(chain.err.find("mlp-small has no fork: every layer depends on the one before it"), std::string::npos)
      << chain.err;
}

TEST(MisleadingInput, CalibrateChecksItsOptionsBeforeLookingForAGpu) {
  const std::string dir = fresh_temp_dir("calibrate-options");
  expect_bad_input({
      {"calibrate --out " + dir + "/x.json --repeat 0", "error: --repeat: must be at least 1, got 0\n"},
      {"calibrate --out " + dir + "/x.json --device -1", "error: --device: must be a GPU index, 0 or more, got -1\n"},
  });
}

TEST(MisleadingInput, AConvOutputTooLargeToCountIsBlamedOnTheConv) {
  const std::string dir = fresh_temp_dir("conv-wrap");
  const std::string path = dir + "/net.json";
  std::ofstream(path) << R"({"batch": 1, "input": [1, 8, 8], "layers": [)"
                         R"({"type": "conv2d", "filters": 4194304, "kernel": 1, "padding": 1048568},)"
                         R"({"type": "flatten"}]})";
  expect_bad_input({{"inspect " + path,
                     "error: " + path + ": layers[0]: the output [4194304, 2097144, 2097144] is too large\n"}});
}

TEST(MisleadingInput, SweepProblemsNameTheSweep) {
  expect_bad_input({
      {"demo rnn --backend sim --sweep steps=1000000",
       "error: --sweep: steps=1000000: 4 layers × 1024 hidden over 1000000 steps, batch 64: layers[0]: brings the "
       "unrolled network past 1048576 ops, more than a run can schedule; use fewer steps or stacked layers\n"},
      {"demo rnn --backend sim --sweep ''",
       "error: --sweep: expected NAME=V1,V2,... (e.g. hidden=256,512,1024), got ''\n"},
      {"demo rnn --backend sim --sweep 'hidden= 256'",
       "error: --sweep: ' 256' is not a positive integer (digits only, e.g. hidden=256,512)\n"},
      {"demo rnn --backend sim --sweep hidden=+256",
       "error: --sweep: '+256' is not a positive integer (digits only, e.g. hidden=256,512)\n"},
      {"demo rnn --backend sim --sweep hidden=256,",
       "error: --sweep: '' is not a positive integer (digits only, e.g. hidden=256,512)\n"},
  });
}

TEST(MisleadingInput, ASweepOverLayersCapsAnExplicitDeviceCount) {
  // --devices 8 was advised for layers=100 on the 8-device machine, and then failed at layers=1.
  const CommandResult result =
      run_splitscope("demo rnn --backend sim --sweep layers=1,2,100 --devices 8 --steps 4 --hidden 64 --quiet");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("crossover"), std::string::npos) << result.out;
  const CommandResult too_many = run_splitscope("demo rnn --backend sim --sweep layers=1,2,100 --steps 4 --quiet");
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_EQ(too_many.err.rfind("error: --sweep: layers=100: --devices: the plan uses 100 devices, but machine "
                               "'h100-nvlink-8' has 8; use --devices 8 or fewer",
                               0),
            0u)
      << too_many.err;
}

TEST(MisleadingInput, OptionsAreCheckedOnEveryBackendAndCommand) {
  expect_bad_input({
      {"run mlp-small --strategy single --devices 1 --seed 18446744073709551616",
       "error: command line: --seed: is too large (at most 18446744073709551615), got 18446744073709551616\n"
       "Run 'splitscope --help' (or 'splitscope COMMAND --help').\n"},
      {"compare mlp-small --backend sim --machine h100-nvlink-8 --strategies vertical --microbatches 4",
       "error: --microbatches: applies to the pipeline strategy only, which this comparison does not run; drop "
       "--microbatches or add pipeline to --strategies\n"},
      {"run mlp-small --strategy single --devices 1 --backend sim --machine h100-nvlink-8 --inter-op-threads -4",
       "error: --inter-op-threads: -4 is negative; give a count of threads, or 0 for one per device\n"},
  });
}

TEST(MisleadingInput, ControlCharactersInNamesAreEscapedInTheTable) {
  const std::string dir = fresh_temp_dir("inspect-control");
  const std::string path = dir + "/net.json";
  std::ofstream(path) << R"({"batch": 2, "input": [4], "layers": [{"type": "relu", "name": "a\nb\u001b[2J"}]})";
  const CommandResult result = run_splitscope("inspect " + path);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("a\\x0ab\\x1b[2J  relu"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find('\x1b'), std::string::npos) << result.out;
}

}  // namespace
}  // namespace misleading_input_test
}  // namespace splitscope::testing
