// --jitter (sim) and --straggler (cpu) on run and compare: what each does to
// a report, and the refusals of each on the other backend.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace noise_options_test {
namespace {

TEST(NoiseOptions, JitterGivesASimulatedRunSpreadOverItsRepeats) {
  const std::string dir = fresh_temp_dir("jitter");
  const CommandResult run = run_splitscope("run mlp-small --strategy vertical --devices 2 --backend sim --machine "
                                           "h100-nvlink-8 --jitter lognormal:0.3 --repeat 7 --report " +
                                           dir + "/r.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["makespan_ms"]["repeats"], 7);
  EXPECT_GT(report["makespan_ms"]["max"].get<double>(), report["makespan_ms"]["min"].get<double>());
  EXPECT_NE(report["machine"]["facts"]["jitter"].get<std::string>().find("sigma 0.3"), std::string::npos);
}

TEST(NoiseOptions, AStragglerSlowsTheMeasuredRun) {
  const std::string dir = fresh_temp_dir("straggler");
  const CommandResult run = run_splitscope("run mlp-small --strategy pipeline --devices 2 --straggler 1:25 --repeat 2 "
                                           "--quiet --report " + dir + "/r.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_GE(report["makespan_ms"]["min"].get<double>(), 25.0);
  EXPECT_LT(report["baseline_makespan_ms"].get<double>(), 25.0) << "single has no device 1 to hold back";
}

TEST(NoiseOptions, EachBelongsToItsBackend) {
  const std::string run = "run mlp-small --strategy pipeline --devices 2 ";
  const std::string sim = "--backend sim --machine h100-nvlink-8 ";
  const CommandResult jitter_on_cpu = run_splitscope(run + "--jitter lognormal:0.2");
  EXPECT_EQ(jitter_on_cpu.exit_code, 2);
  EXPECT_NE(jitter_on_cpu.err.find("--straggler"), std::string::npos) << jitter_on_cpu.err;
  const CommandResult straggler_on_sim = run_splitscope(run + sim + "--straggler 1:10");
  EXPECT_EQ(straggler_on_sim.exit_code, 2);
  EXPECT_NE(straggler_on_sim.err.find("--jitter"), std::string::npos) << straggler_on_sim.err;
  for (const char* bad : {"--jitter normal:0.2", "--jitter lognormal:-1", "--jitter lognormal:x"}) {
    const CommandResult refused = run_splitscope(run + sim + bad);
    EXPECT_EQ(refused.exit_code, 2) << bad;
  }
  for (const char* bad : {"--straggler 1", "--straggler 2:10", "--straggler -1:10", "--straggler 1:-5"}) {
    const CommandResult refused = run_splitscope(run + bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
  }
}

}  // namespace
}  // namespace noise_options_test
}  // namespace splitscope::testing
