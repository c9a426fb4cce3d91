// End to end: `--sequence-parallel` on run, plan and compare (tensor and
// hybrid on a transformer), hybrid's tensor groups over a transformer, and
// what is refused (exit 2 naming the option).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../common/gpt_block_network.hpp"
#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace sequence_parallel_command_test {
namespace {

TEST(SequenceParallelCommand, TensorAndHybridTrainAsSingleOnTheCpu) {
  for (const char* line : {
           "run gpt-small --train --strategy tensor --devices 2 --sequence-parallel --steps 2 --check",
           "run bert-small --train --strategy tensor --devices 4 --sequence-parallel --steps 2 --check",
           "run gpt-small --train --strategy hybrid --degrees 2,2,1 --devices 4 --microbatches 2 --steps 2 --check",
           "run bert-small --train --strategy hybrid --degrees 2,1,2 --devices 4 --sequence-parallel --steps 2 "
           "--check",
       }) {
    const CommandResult result = run_splitscope(line);
    ASSERT_EQ(result.exit_code, 0) << line << "\n" << result.err;
    EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << line << "\n" << result.out;
  }
}

TEST(SequenceParallelCommand, PlanJsonCountsReduceScattersAndAllGathers) {
  // gpt-small: 2 blocks, B 4, T 8, H 16. Forward, per block: 2 all-gathers
  // and 2 reduce-scatters of B·T·H floats (2 KiB), and the LM head's input
  // all-gathered; over 2 devices each moves 2 KiB·(2-1) = 2 KiB in a ring.
  const CommandResult plan =
      run_splitscope("plan gpt-small --strategy tensor --devices 2 --sequence-parallel --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto json = nlohmann::json::parse(plan.out);
  EXPECT_EQ(json["collectives"]["count"], 2 * 4 + 1) << json["collectives"];
  EXPECT_EQ(json["collectives"]["bytes"], (2 * 4 + 1) * 2048) << json["collectives"];
  // Without it: 2 all-reduces a block, 2·(2-1)/2 of 2 KiB from each of 2 devices.
  const CommandResult tensor = run_splitscope("plan gpt-small --strategy tensor --devices 2 --json");
  ASSERT_EQ(tensor.exit_code, 0) << tensor.err;
  const auto plain = nlohmann::json::parse(tensor.out);
  EXPECT_EQ(plain["collectives"]["count"], 2 * 2) << plain["collectives"];
  EXPECT_EQ(plain["collectives"]["bytes"], 2 * 2 * 2 * 2048) << plain["collectives"];
}

TEST(SequenceParallelCommand, RefusalsAreExitTwoNamingTheOption) {
  const std::string dir = fresh_temp_dir("sequence_parallel");
  const std::string six = dir + "/six-positions.json";
  std::ofstream(six) << test_networks::gpt_block_network("six-positions", 2, 6, 12, true);
  const struct {
    std::string line;
    const char* message;
  } cases[] = {
      {"plan gpt-small --strategy data --devices 2 --sequence-parallel", "use --strategy tensor or hybrid"},
      {"plan mlp-small --strategy tensor --devices 2 --sequence-parallel", "has no attention blocks"},
      {"run mlp-small --strategy hybrid --degrees 2,1,1 --devices 2 --sequence-parallel --backend sim --machine h100-nvlink-8",
       "has no attention blocks"},
      {"plan " + six + " --strategy tensor --devices 4 --sequence-parallel", "6 positions"},
      {"compare gpt-small --strategies single,data --devices 2 --backend sim --sequence-parallel",
       "add tensor to --strategies"},
  };
  for (const auto& c : cases) {
    const CommandResult result = run_splitscope(c.line);
    EXPECT_EQ(result.exit_code, 2) << c.line << "\n" << result.err;
    EXPECT_NE(result.err.find("--sequence-parallel"), std::string::npos) << c.line << "\n" << result.err;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << c.line << "\n" << result.err;
  }
}

TEST(SequenceParallelCommand, APlanFileKeepsTheOptionAndRunsAsTheCommandLine) {
  // Written by `plan --out`, read by `run --plan`: the same plan (the file's
  // digest is checked on rebuild) and the same prediction, to the digit.
  const std::string dir = fresh_temp_dir("sequence_parallel_file");
  const std::string sim = " --train --backend sim --machine h100-nvlink-8";
  for (const std::string options : {"--strategy tensor --devices 2 --sequence-parallel",
                                    "--strategy hybrid --degrees 2,2,1 --devices 4 --microbatches 2 "
                                    "--sequence-parallel"}) {
    const std::string file = dir + "/plan.json";
    std::filesystem::remove(file);
    const CommandResult written = run_splitscope("plan gpt-small --train " + options + " --out " + file);
    ASSERT_EQ(written.exit_code, 0) << options << "\n" << written.err;
    const auto strategy = nlohmann::json::parse(read_text_file(file))["strategy"];
    EXPECT_EQ(strategy["sequence_parallel"], true) << strategy;
    const CommandResult direct = run_splitscope("run gpt-small " + options + sim);
    const CommandResult replayed = run_splitscope("run gpt-small --plan " + file + sim);
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
    const auto makespan = [](const std::string& out) { return out.substr(out.find("makespan:"), 40); };
    EXPECT_EQ(makespan(replayed.out), makespan(direct.out)) << options;
    // The option comes from the file.
    const CommandResult twice = run_splitscope("run gpt-small --plan " + file + " --sequence-parallel" + sim);
    EXPECT_EQ(twice.exit_code, 2) << twice.err;
    EXPECT_NE(twice.err.find("--sequence-parallel: comes from the plan file"), std::string::npos) << twice.err;
  }
}

}  // namespace
}  // namespace sequence_parallel_command_test
}  // namespace splitscope::testing
