// End to end: `splitscope run` on the cpu and sim backends, its outputs and its exit codes.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "util/npy.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope::testing {
namespace run_test {
namespace {

TEST(RunCommand, CpuRunWritesValidReportTraceAndOutput) {
  const std::string dir = fresh_temp_dir("run-cpu");
  const CommandResult result = run_splitscope(
      "run mlp-small --strategy vertical --devices 2 --check --repeat 2 --report " + dir + "/r.json --trace " +
      dir + "/t.json --save-output " + dir + "/out.npy --html " + dir + "/r.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("verdict:"), std::string::npos) << result.out;

  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["schema"], "splitscope.report/1");
  EXPECT_EQ(report["strategy"], "vertical");
  EXPECT_EQ(report["devices"], 2);
  EXPECT_EQ(report["backend"], "cpu");
  EXPECT_TRUE(report["measured"].get<bool>());
  EXPECT_EQ(report["makespan_ms"]["repeats"], 2);
  EXPECT_EQ(report["per_device"].size(), 2u);
  EXPECT_GT(report["baseline_makespan_ms"].get<double>(), 0.0);
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the run report does not match src/report/schema";

  // Every span of the trace lies inside the run.
  const auto trace = nlohmann::json::parse(read_text_file(dir + "/t.json"));
  const double makespan_us = report["makespan_ms"]["max"].get<double>() * 1000.0;
  int spans = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    ++spans;
    EXPECT_GE(event["ts"].get<double>(), 0.0);
    EXPECT_LE(event["ts"].get<double>() + event["dur"].get<double>(), makespan_us + 1e-3);
  }
  EXPECT_GT(spans, 10);

  const NpyArray output = decode_npy(read_text_file(dir + "/out.npy"), "out.npy");
  EXPECT_EQ(output.shape, (std::vector<int64_t>{8, 10}));  // batch 8, 10 classes
  double row_sum = 0;
  for (int c = 0; c < 10; ++c) row_sum += output.data[static_cast<size_t>(c)];
  EXPECT_NEAR(row_sum, 1.0, 1e-5);  // softmax rows sum to 1
  EXPECT_TRUE(std::filesystem::exists(dir + "/r.html"));
}

TEST(RunCommand, EveryStrategyPassesTheCheckOnEverySmallNetwork) {
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small"}) {
    for (const char* strategy : {"horizontal", "pipeline", "vertical", "tensor"}) {
      if (std::string(strategy) == "tensor" && std::string(network) != "mlp-small" &&
          std::string(network) != "cnn-small") {
        continue;  // no dense pair: the same plan as vertical
      }
      const std::string microbatches = std::string(strategy) == "pipeline" ? " --microbatches 3" : "";
      const CommandResult result = run_splitscope(std::string("run ") + network + " --strategy " + strategy +
                                                  " --devices 3 --repeat 1 --warmup 0 --check" + microbatches);
      EXPECT_EQ(result.exit_code, 0) << network << " " << strategy << ": " << result.err;
      EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << network << " " << strategy;
    }
  }
}

TEST(RunCommand, SimulatedRunIsAPrediction) {
  const std::string dir = fresh_temp_dir("run-sim");
  const CommandResult result = run_splitscope("run cnn-small --strategy pipeline --devices 2 --microbatches 2 "
                                              "--backend sim --machine h100-pcie-4 --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_FALSE(report["measured"].get<bool>());
  EXPECT_EQ(report["backend"], "sim");
  EXPECT_EQ(report["machine"]["name"], "h100-pcie-4");
  EXPECT_EQ(report["microbatches"], 2);
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the report does not match src/report/schema";
  // The same command twice gives the same prediction, byte for byte (the context block aside).
  const std::string again = dir + "/again.json";
  ASSERT_EQ(run_splitscope("run cnn-small --strategy pipeline --devices 2 --microbatches 2 --backend sim "
                           "--machine h100-pcie-4 --report " + again).exit_code, 0);
  auto first = report;
  auto second = nlohmann::json::parse(read_text_file(again));
  first.erase("context");
  second.erase("context");
  EXPECT_EQ(first.dump(), second.dump());
}

TEST(RunCommand, CudaWithoutAGpuIsExitThree) {
  if (cuda_gpu_available()) GTEST_SKIP() << "a GPU is present here; the cuda tests cover it";
  const CommandResult result = run_splitscope("run mlp-small --strategy vertical --devices 2 --backend cuda");
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("--backend cpu"), std::string::npos) << result.err;
}

TEST(RunCommand, BadOptionsAreExitTwoAndWriteNothing) {
  const std::string dir = fresh_temp_dir("run-bad");
  struct Case {
    std::string args;
    std::string words;
  };
  const std::vector<Case> cases{
      {"run mlp-small --strategy vertical --devices 2 --backend sim", "--machine"},
      {"run mlp-small --strategy vertical --devices 2 --backend sim --machine no-such-machine", "known machines"},
      {"run mlp-small --strategy vertical --devices 2 --trace /no/such/folder/t.json", "/no/such/folder"},
      {"run mlp-small --strategy vertical --devices 2 --backend sim --machine h100-nvlink-8 --check", "computes no outputs"},
      {"run mlp-small --strategy pipeline --devices 2 --microbatches 9", "between 1 and the batch (8)"},
      {"run mlp-small --strategy vertical --devices 2 --repeat 0", "--repeat"},
      {"run mlp-small --strategy vertical --devices 2 --dtype bf16", "--dtype: applies to --backend cuda only"},
      {"run mlp-small --strategy vertical --devices 2 --backend sim --machine h100-nvlink-8 --link host",
       "--link: applies to --backend cuda only"},
      {"run mlp-small --strategy vertical --devices 2 --intra-op-threads 100000", "--intra-op-threads"},
      {"run mlp-small --strategy vertical --devices 2 --batch 9223372036854775807", "--batch: batch"},
      // 2^21 rows × 8192 features × 4 B is 64 GiB for the input alone: refused before anything is allocated.
      {"run mlp --strategy single --devices 1 --batch 2097152", "GiB available now, less a margin of"},
      {"run mlp-small --strategy vertical --devices 2 --seed -1", "--seed: must be zero or a positive integer"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args + " --report " + dir + "/r.json");
    EXPECT_EQ(result.exit_code, 2) << c.args << ": " << result.err;
    EXPECT_NE(result.err.find(c.words), std::string::npos) << c.args << ": " << result.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
}

TEST(RunCommand, DeadlineIsExitOneNamingTheOpAndWritesNoReport) {
  const std::string dir = fresh_temp_dir("run-deadline");
  // cnn's conv1 alone takes far longer than 1 ms on this machine's CPU.
  const CommandResult result = run_splitscope("run cnn --strategy single --devices 1 --batch 4 --warmup 0 "
                                              "--repeat 1 --timeout-ms 1 --report " + dir + "/r.json");
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("conv"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
}

TEST(RunCommand, OutputsNeverOverwriteAnInputOrEachOther) {
  const std::string dir = fresh_temp_dir("run-clash");
  const std::string network = dir + "/net.json";
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  ASSERT_NE(root, nullptr) << "run the tests with meson test";
  std::filesystem::copy_file(std::string(root) + "/models/networks/mlp-small.json", network);
  const std::string original = read_text_file(network);
  const std::string run = "run " + network + " --strategy horizontal --devices 2 --repeat 1 --quiet";
  struct Case {
    std::string outputs;
    std::string words;
  };
  const std::vector<Case> cases{
      {"--report " + network, "--report: " + network + " is an input of this command"},
      {"--report " + dir + "/../" + std::filesystem::path(dir).filename().string() + "/net.json", "is an input"},
      {"--report " + dir + "/x.json --trace " + dir + "/x.json", "--trace: " + dir + "/x.json is also the file of --report"},
      {"--report " + dir + "/y.json --save-output " + dir + "/y.json", "is also the file of --report"},
      {"--save-output " + dir, "--save-output: " + dir + " is a folder"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(run + " " + c.outputs);
    EXPECT_EQ(result.exit_code, 2) << c.outputs << ": " << result.err;
    EXPECT_NE(result.err.find(c.words), std::string::npos) << c.outputs << ": " << result.err;
  }
  EXPECT_EQ(read_text_file(network), original);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/y.json"));
}

TEST(RunCommand, AReportThroughALinkLandsInTheLinkedFileAndKeepsTheLink) {
  const std::string dir = fresh_temp_dir("run-link");
  std::filesystem::create_directory(dir + "/real");
  std::filesystem::create_symlink("real/r.json", dir + "/link.json");  // dangling until written
  const CommandResult result =
      run_splitscope("run mlp-small --strategy single --devices 1 --repeat 1 --quiet --report " + dir + "/link.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.json"));
  EXPECT_EQ(nlohmann::json::parse(read_text_file(dir + "/real/r.json"))["schema"], "splitscope.report/1");
}

}  // namespace
}  // namespace run_test
}  // namespace splitscope::testing
