// End to end: a training run whose loss becomes NaN or infinite fails (exit
// 1) with a message naming the step and what to try, on every path that
// computes losses, and writes no report; a learning rate that is not finite
// is refused before anything runs (exit 2).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace divergence_test {
namespace {

/// Far too large a step: mlp-small's weights overflow float32 within a few steps.
const std::string kDiverging = " --train --lr 1e12 --momentum 0";

void expect_diverged(const std::string& args) {
  const std::string dir = fresh_temp_dir("diverged");
  const CommandResult result = run_splitscope(args + " --report " + dir + "/r.json");
  EXPECT_EQ(result.exit_code, 1) << args << "\n" << result.out << result.err;
  EXPECT_NE(result.err.find("training diverged: the loss of step "), std::string::npos) << args << "\n" << result.err;
  EXPECT_NE(result.err.find("try a lower --lr (this run: 1e+12"), std::string::npos) << args << "\n" << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << args;
}

TEST(Divergence, EveryTrainingPathFailsNamingTheStep) {
  for (const std::string& args : {
           "run mlp-small --strategy single --devices 1 --steps 6" + kDiverging,
           "run mlp-small --strategy data --devices 2 --steps 6" + kDiverging,
           "run mlp-small --strategy tensor --devices 2 --steps 6" + kDiverging,
           "run mlp-small --strategy pipeline --devices 2 --microbatches 2 --steps 6" + kDiverging,
           "run mlp-small --strategy ps --devices 2 --steps 6" + kDiverging,
           "run mlp-small --strategy ps --devices 2 --async --steps 6" + kDiverging,
       }) {
    expect_diverged(args);
  }
}

TEST(Divergence, AsyncParameterServersSuggestTheirMitigations) {
  const CommandResult result =
      run_splitscope("run mlp-small --strategy ps --devices 2 --async --steps 6 -q" + kDiverging);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("--staleness-lr"), std::string::npos) << result.err;
}

TEST(Divergence, TheStepNamedIsTheFirstWhoseLossIsNotFinite) {
  // The same run with one step fewer each time: the step named is the first
  // count at which the run fails, and a run stopping before it passes.
  const std::string base = "run mlp-small --strategy single --devices 1 -q" + kDiverging + " --steps ";
  const CommandResult failed = run_splitscope(base + "6");
  ASSERT_EQ(failed.exit_code, 1) << failed.err;
  const std::string marker = "the loss of step ";
  const size_t at = failed.err.find(marker);
  ASSERT_NE(at, std::string::npos) << failed.err;
  const int step = std::stoi(failed.err.substr(at + marker.size()));
  ASSERT_GE(step, 2) << failed.err;
  EXPECT_EQ(run_splitscope(base + std::to_string(step)).exit_code, 1);
  const CommandResult before = run_splitscope(base + std::to_string(step - 1));
  EXPECT_EQ(before.exit_code, 0) << before.err;
}

TEST(Divergence, TheRnnDemoAndSweepPointsFailToo) {
  const std::string dir = fresh_temp_dir("diverged-demo");
  // The cells' tanh bounds the loss until the weights themselves overflow: a step of 1e300 does.
  const CommandResult demo = run_splitscope("demo rnn --backend cpu --train --layers 2 --hidden 16 --steps 4 --batch 4 "
                                            "--repeat 4 -q --lr 1e300 --momentum 0 --report " + dir + "/d.json");
  EXPECT_EQ(demo.exit_code, 1) << demo.out << demo.err;
  EXPECT_NE(demo.err.find("training diverged"), std::string::npos) << demo.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/d.json"));

  // A sweep point that diverges stops the sweep with the run's own message, not a JSON type error.
  const CommandResult sweep = run_splitscope("sweep -q --over devices=1,2 --report " + dir +
                                             "/s.json run mlp-small --strategy data --steps 6" + kDiverging);
  EXPECT_EQ(sweep.exit_code, 1) << sweep.err;
  EXPECT_NE(sweep.err.find("training diverged"), std::string::npos) << sweep.err;
  EXPECT_EQ(sweep.err.find("json.exception"), std::string::npos) << sweep.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.json"));
}

TEST(Divergence, ALearningRateThatIsNotFiniteIsRefused) {
  for (const std::string lr : {"inf", "1e309", "nan", "-inf"}) {
    const CommandResult result =
        run_splitscope("run mlp-small --strategy single --devices 1 --train --steps 1 --lr " + lr);
    EXPECT_EQ(result.exit_code, 2) << lr << ": " << result.err;
    EXPECT_NE(result.err.find("--lr"), std::string::npos) << lr << ": " << result.err;
  }
}

}  // namespace
}  // namespace divergence_test
}  // namespace splitscope::testing
