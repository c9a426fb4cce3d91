// End to end: `splitscope demo rnn` on the cpu (small sizes) and the
// simulator: the picture, the verdict table, the sweep, the files, and the
// exit codes of bad options.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope::testing {
namespace demo_test {
namespace {

constexpr const char* kSmallCpu =
    "demo rnn --backend cpu --layers 3 --hidden 32 --steps 8 --batch 4 --repeat 2 --warmup 1";

TEST(DemoCommand, CpuDrawsTheWavefrontAndJudgesEveryWay) {
  const std::string dir = fresh_temp_dir("demo-cpu");
  const CommandResult result = run_splitscope(std::string(kSmallCpu) + " --report " + dir + "/demo.json --html " +
                                              dir + "/demo.html --trace " + dir + "/trace.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  EXPECT_NE(out.find("splitscope demo rnn: lstm, 3 layers x 32 hidden, 8 steps, batch 4"), std::string::npos) << out;
  EXPECT_NE(out.find("measured on cpu (cpu threads)"), std::string::npos) << out;
  // The picture: one row per device, then the busy counts and the phases.
  for (const char* row : {"device  0 |", "device  1 |", "device  2 |", "   busy   |"}) {
    EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << out;
  }
  EXPECT_EQ(out.find("device  3 |"), std::string::npos) << out;
  EXPECT_NE(out.find("devices busy in each slice: "), std::string::npos) << out;
  EXPECT_NE(out.find("fill: "), std::string::npos) << out;
  EXPECT_NE(out.find("of the compute time"), std::string::npos) << out;
  // Piped to a file: no colour escapes.
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  // The verdict table: the four ways, and the baseline named with how it was measured.
  for (const char* way : {"single device, fused stack", "single device, cell by cell", "layer split over 3 devices",
                          "layer split, 3 micro-batches"}) {
    EXPECT_NE(out.find(way), std::string::npos) << way << "\n" << out;
  }
  EXPECT_NE(out.find("Against the fused single device: fused cpu loop (measured: "), std::string::npos) << out;
  EXPECT_NE(out.find("\nverdict: "), std::string::npos) << out;

  const auto report = nlohmann::json::parse(read_text_file(dir + "/demo.json"));
  EXPECT_EQ(report["schema"], "splitscope.demo-rnn/1");
  EXPECT_EQ(report["shape"]["layers"], 3);
  EXPECT_EQ(report["devices"], 3);
  EXPECT_EQ(report["microbatches"], 3);
  EXPECT_EQ(report["baseline"]["implementation"], "fused cpu loop");
  EXPECT_EQ(report["baseline"]["makespan_ms"]["repeats"], 2);
  ASSERT_EQ(report["ways"].size(), 4u);
  const double fused_ms = report["ways"][0]["makespan_ms"]["median"].get<double>();
  for (const auto& way : report["ways"]) {
    // speedup against the fused single device = fused median / this median
    EXPECT_NEAR(way["speedup_vs_fused"].get<double>(), fused_ms / way["makespan_ms"]["median"].get<double>(), 1e-9);
  }
  EXPECT_EQ(report["wavefront"]["busy"].size(), 3u);
  EXPECT_EQ(report["runs"].size(), 3u);
  EXPECT_TRUE(report["sweep"].is_null());
  EXPECT_NE(read_text_file(dir + "/demo.html").find("<svg class=\"timeline\""), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(read_text_file(dir + "/trace.json"))["traceEvents"].empty());
}

TEST(DemoCommand, SimPredictsAndSaysSo) {
  const CommandResult result =
      run_splitscope("demo rnn --backend sim --machine h100-nvlink-8 --layers 4 --hidden 256 --steps 16 --batch 8 "
                     "--cell gru --microbatches 2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("predicted on sim (simulated), machine h100-nvlink-8"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("cost-model prediction (predicted from h100-nvlink-8's cost model"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("layer split, 2 micro-batches"), std::string::npos) << result.out;
  // The simulator's wavefront is regular: once every device has started, all 4 compute throughout the steady
  // state (each cell's input arrives while the cell before it runs).
  EXPECT_NE(result.out.find("devices computing 100% of it; at most 4 busy"), std::string::npos) << result.out;
}

TEST(DemoCommand, SweepGivesTheCrossoverInTextJsonAndHtml) {
  const std::string dir = fresh_temp_dir("demo-sweep");
  const CommandResult result = run_splitscope(
      "demo rnn --backend sim --sweep hidden=64,512,4096 --steps 16 --batch 16 --report " + dir + "/sweep.json --html " +
      dir + "/sweep.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("sweep over hidden"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("crossover: "), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/sweep.json"));
  EXPECT_EQ(report["schema"], "splitscope.demo-rnn/1");
  ASSERT_EQ(report["sweep"]["points"].size(), 3u);
  EXPECT_EQ(report["sweep"]["name"], "hidden");
  for (const auto& point : report["sweep"]["points"]) {
    EXPECT_NEAR(point["split_speedup"].get<double>(),
                point["fused_ms"].get<double>() / point["split_ms"].get<double>(), 1e-9);
  }
  // The crossover is the first value whose better split wins (>= 1.05), or null.
  nlohmann::json expected = nullptr;
  for (const auto& point : report["sweep"]["points"]) {
    if (point["best_speedup"].get<double>() >= 1.05) {
      expected = point["value"];
      break;
    }
  }
  EXPECT_EQ(report["sweep"]["crossover"], expected);
  const std::string html = read_text_file(dir + "/sweep.html");
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("Speedup against the fused single device"), std::string::npos);
}

TEST(DemoCommand, ATooLargeStackNamesTheOptions) {
  const CommandResult result = run_splitscope("demo rnn --backend sim --hidden 1099511627776");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("--layers/--hidden/--steps/--batch: 4 layers × 1099511627776 hidden"), std::string::npos)
      << result.err;
}

TEST(DemoCommand, BadOptionsAreExitTwo) {
  const CommandResult too_many = run_splitscope("demo rnn --backend cpu --layers 4 --devices 5");
  EXPECT_EQ(too_many.exit_code, 2) << too_many.err;
  EXPECT_NE(too_many.err.find("--devices"), std::string::npos) << too_many.err;
  EXPECT_NE(too_many.err.find("at most 4"), std::string::npos) << too_many.err;
  for (const char* bad : {"demo rnn --backend cpu --cell rnn", "demo rnn --backend cpu --sweep width=1,2",
                          "demo rnn --backend cpu --sweep hidden=0", "demo rnn --backend cpu --microbatches 0",
                          "demo rnn --backend cpu --hidden 0", "demo rnn --backend sim --machine no-such-machine",
                          "demo rnn --backend sim --sweep hidden=8 --trace t.json",
                          "demo rnn --backend cpu --report /no/such/folder/r.json", "demo"}) {
    const CommandResult result = run_splitscope(bad);
    EXPECT_EQ(result.exit_code, 2) << bad << ": " << result.err;
    EXPECT_NE(result.err.find("error: "), std::string::npos) << bad << ": " << result.err;
  }
}

TEST(DemoCommand, TrainRunsTrainingStepsAgainstTheFusedTrainingLoop) {
  const std::string dir = fresh_temp_dir("demo-train");
  const CommandResult result =
      run_splitscope("demo rnn --backend cpu --train --layers 2 --hidden 16 --steps 4 --batch 4 -m 2 --schedule 1f1b "
                     "--repeat 3 -q --report " + dir + "/d.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("vs fused"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("fused cpu training loop"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/d.json"));
  EXPECT_EQ(report["train"]["schedule"], "1f1b");
  EXPECT_EQ(report["train"]["steps"], 3);
  EXPECT_EQ(report["baseline"]["implementation"], "fused cpu training loop");
  EXPECT_EQ(report["baseline"]["makespan_ms"]["repeats"], 3);
  ASSERT_EQ(report["ways"].size(), 4u);
  EXPECT_EQ(report["ways"][0]["way"], "single-fused");
  EXPECT_EQ(report["ways"][1]["way"], "single-cells");
  for (const auto& way : report["ways"]) EXPECT_FALSE(way["speedup_vs_fused"].is_null()) << way["way"];
  // Each run report carries its losses, one a step, equal across the ways (the same step computed).
  ASSERT_EQ(report["runs"].size(), 3u);
  const auto& first = report["runs"][0]["train"]["losses"];
  ASSERT_EQ(first.size(), 3u);
  for (const auto& run : report["runs"]) {
    for (size_t step = 0; step < 3; ++step) {
      EXPECT_NEAR(run["train"]["losses"][step].get<double>(), first[step].get<double>(),
                  1e-5 * std::abs(first[step].get<double>()));
    }
  }
  for (const char* bad : {"demo rnn --backend cpu --train --sweep hidden=8,16", "demo rnn --backend cpu --schedule 1f1b",
                          "demo rnn --backend cpu --train --layers 2 --microbatches 1 --schedule 1f1b",
                          "demo rnn --backend cpu --train --lr 0", "demo rnn --backend cpu --train --bucket-mib 5"}) {
    const CommandResult refused = run_splitscope(std::string(bad) + " --report " + dir + "/bad.json");
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/bad.json")) << bad;
  }
}

TEST(DemoCommand, CudaWithoutAGpuIsExitThree) {
  if (cuda_gpu_available()) GTEST_SKIP() << "a GPU is present here; the cuda tests cover it";
  const CommandResult result = run_splitscope("demo rnn --backend cuda --layers 2 --hidden 16 --steps 4 --batch 2");
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("--backend cpu"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace demo_test
}  // namespace splitscope::testing
