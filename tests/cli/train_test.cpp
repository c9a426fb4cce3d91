// End to end: `splitscope run|plan --train` on the cpu and sim backends,
// its report and its refusals.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace train_test {
namespace {

TEST(TrainCommand, CpuTrainingRunReportsEveryStepsLossAndThePartsOfTheStep) {
  const std::string dir = fresh_temp_dir("train-cpu");
  const CommandResult result =
      run_splitscope("run mlp-small --strategy pipeline --devices 2 --microbatches 4 --train --steps 4 --schedule "
                     "1f1b --lr 0.05 --check --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("loss per step:"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  const auto& train = report["train"];
  ASSERT_TRUE(train.is_object()) << report.dump(2);
  EXPECT_EQ(train["steps"], 4);
  ASSERT_EQ(train["losses"].size(), 4u);
  // A fixed batch, the same weights and inputs: the loss of step 4 is below step 1's.
  EXPECT_LT(train["losses"][3].get<double>(), train["losses"][0].get<double>());
  EXPECT_EQ(train["schedule"], "1f1b");
  EXPECT_EQ(train["optimizer"]["name"], "sgd+momentum");
  EXPECT_GT(train["samples_per_s"].get<double>(), 0.0);
  EXPECT_EQ(report["makespan_ms"]["repeats"], 4);
  for (const auto& device : report["per_device"]) {
    EXPECT_GT(device["forward_ms"].get<double>(), 0.0);
    EXPECT_GT(device["backward_ms"].get<double>(), 0.0);
    EXPECT_GT(device["update_ms"].get<double>(), 0.0);
    EXPECT_EQ(device["optimizer_state_bytes"], device["param_bytes"]);
  }
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the training report does not match src/report/schema";
}

TEST(TrainCommand, AdamTrainsTheDataParallelReplicas) {
  const std::string dir = fresh_temp_dir("train-adam");
  const CommandResult result = run_splitscope("run mlp-small --strategy data --devices 2 --train --steps 3 --optimizer "
                                              "adam --lr 0.001 --check --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["train"]["optimizer"]["name"], "adam");
  ASSERT_EQ(report["train"]["losses"].size(), 3u);
  EXPECT_LT(report["train"]["losses"][2].get<double>(), report["train"]["losses"][0].get<double>());
  // Adam keeps two moments a weight.
  for (const auto& device : report["per_device"]) {
    EXPECT_EQ(device["optimizer_state_bytes"].get<int64_t>(), 2 * device["param_bytes"].get<int64_t>());
  }
}

TEST(TrainCommand, SimulatedTrainingPredictsStepsWithoutLosses) {
  const std::string dir = fresh_temp_dir("train-sim");
  const CommandResult result = run_splitscope(
      "run cnn-small --strategy horizontal --devices 2 --train --steps 2 --backend sim --machine h100-nvlink-8 "
      "--report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_TRUE(report["train"]["losses"].is_null());
  EXPECT_EQ(report["train"]["schedule"], "none");
  EXPECT_GT(report["per_device"][0]["backward_ms"].get<double>(), report["per_device"][0]["forward_ms"].get<double>());
}

TEST(TrainCommand, SimulatedStepsAreTheStepsAsked) {
  // Without noise every simulated step is the same: one is simulated, and the report says all of them.
  const std::string dir = fresh_temp_dir("train-sim-steps");
  const std::string run = "run cnn-small --strategy horizontal --devices 2 --train --backend sim --machine h100-nvlink-8 ";
  const CommandResult alike = run_splitscope(run + "--steps 5 --report " + dir + "/alike.json");
  ASSERT_EQ(alike.exit_code, 0) << alike.err;
  EXPECT_NE(alike.out.find("training: 5 step(s) (alike without --jitter: one simulated)"), std::string::npos)
      << alike.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/alike.json"));
  EXPECT_EQ(report["train"]["steps"], 5);
  // With noise each step draws its own: as many timed steps as asked.
  const CommandResult noisy = run_splitscope(run + "--steps 4 --jitter lognormal:0.1 --report " + dir + "/noisy.json");
  ASSERT_EQ(noisy.exit_code, 0) << noisy.err;
  const auto drawn = nlohmann::json::parse(read_text_file(dir + "/noisy.json"));
  EXPECT_EQ(drawn["train"]["steps"], 4);
  EXPECT_EQ(drawn["makespan_ms"]["repeats"], 4);
}

TEST(TrainCommand, PlanCountsTheStashOfTheChosenSchedule) {
  const auto stash = [](const std::string& schedule) {
    const CommandResult result = run_splitscope(
        "plan mlp-small --strategy pipeline --devices 2 --microbatches 8 --train --json --schedule " + schedule);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto plan = nlohmann::json::parse(result.out);
    EXPECT_EQ(plan["train"]["schedule"], schedule);
    return plan["per_device"][0]["activations_peak_bytes"].get<int64_t>();
  };
  EXPECT_LT(stash("1f1b"), stash("gpipe"));
}

TEST(TrainCommand, RecomputeShrinksTheStashAndTrainsAsWithout) {
  const auto plan = [](const std::string& extra) {
    const CommandResult result = run_splitscope(
        "plan mlp-small --strategy pipeline --devices 2 --microbatches 8 --train --json " + extra);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(result.out);
  };
  const auto stashed = plan("");
  const auto recomputed = plan("--recompute");
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_LT(recomputed["per_device"][d]["activations_peak_bytes"].get<int64_t>(),
              stashed["per_device"][d]["activations_peak_bytes"].get<int64_t>()) << "device " << d;
    EXPECT_GT(recomputed["per_device"][d]["flops"].get<int64_t>(), stashed["per_device"][d]["flops"].get<int64_t>());
  }
  // The cpu backend trains to the same losses with it as without (--check: the output equals single's).
  const std::string dir = fresh_temp_dir("train-recompute");
  const auto losses = [&](const std::string& extra) {
    const CommandResult result = run_splitscope(
        "run mlp-small --strategy pipeline --devices 2 --microbatches 4 --train --steps 2 --check --report " + dir +
        "/r.json " + extra);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return nlohmann::json::parse(read_text_file(dir + "/r.json"))["train"]["losses"];
  };
  const auto plain = losses("");
  const auto rerun = losses("--recompute");
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(rerun.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(rerun[i].get<double>(), plain[i].get<double>(), 1e-6 * plain[i].get<double>());
}

TEST(TrainCommand, PlanShowsDataParallelGradientsInBucketsOfTheGivenSize) {
  const auto all_reduces = [](const std::string& bucket) {
    const CommandResult result =
        run_splitscope("plan mlp-small --strategy data --devices 2 --train --json --bucket-mib " + bucket);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto collectives = nlohmann::json::parse(result.out)["collectives"];
    // However many buckets, every gradient moves once: 2(N-1)/N of its bytes into each of N = 2 devices
    // (4 x dense 64 from 64 inputs, a 10-way classifier: 17,290 floats).
    EXPECT_EQ(collectives["bytes"], 2 * 1 * 4 * (4 * (64 * 64 + 64) + 64 * 10 + 10));
    return collectives["count"].get<int>();
  };
  // mlp-small's five dense layers: one all-reduce each without buckets; 25 MiB holds them all.
  EXPECT_EQ(all_reduces("0"), 5);
  EXPECT_EQ(all_reduces("25"), 1);
}

TEST(TrainCommand, ImpossibleTrainingOptionsAreExitTwoAndWriteNothing) {
  const std::string dir = fresh_temp_dir("train-bad");
  struct Case {
    std::string args;
    std::string words;
  };
  const std::vector<Case> cases{
      {"run mlp-small --strategy pipeline --devices 2 --schedule 1f1b", "add --train"},
      {"run mlp-small --strategy horizontal --devices 2 --train --schedule 1f1b", "--strategy pipeline"},
      {"run mlp-small --strategy single --devices 1 --train --lr 0", "--lr"},
      {"run mlp-small --strategy single --devices 1 --train --momentum 1", "--momentum"},
      {"run mlp-small --strategy single --devices 1 --train --steps 0", "--steps"},
      {"run mlp-small --strategy pipeline --devices 2 --recompute", "add --train"},
      {"run mlp-small --strategy single --devices 1 --train --optimizer adam --momentum 0.5", "applies to --optimizer sgd"},
      {"run mlp-small --strategy single --devices 1 --train --optimizer lamb", "--optimizer"},
      {"run mlp-small --strategy data --devices 2 --bucket-mib 5", "add --train"},
      {"run mlp-small --strategy data --devices 2 --train --bucket-mib -1", "--bucket-mib"},
      {"run mlp-small --strategy data --devices 2 --train --bucket-mib nan", "--bucket-mib"},
      // A training run's timed runs are its steps; --steps without --train would count nothing.
      {"run mlp-small --strategy single --devices 1 --train --repeat 20", "give --steps K instead"},
      {"run mlp-small --strategy single --devices 1 --steps 5", "add --train"},
      {"compare mlp-small --devices 2 --train --repeat 20 --backend sim --machine h100-nvlink-8", "give --steps K"},
      {"compare mlp-small --devices 2 --steps 5 --backend sim --machine h100-nvlink-8", "add --train"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args + " --report " + dir + "/r.json");
    EXPECT_EQ(result.exit_code, 2) << c.args << ": " << result.err;
    EXPECT_NE(result.err.find(c.words), std::string::npos) << c.args << ": " << result.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
}

}  // namespace
}  // namespace train_test
}  // namespace splitscope::testing

namespace splitscope::testing {
namespace train_test {
namespace {

TEST(TrainCommand, CompareTrainJudgesEverySplitAgainstTheFasterOfSingleAndData) {
  const std::string dir = fresh_temp_dir("train-compare");
  const CommandResult result = run_splitscope("compare cnn --backend sim --machine h100-nvlink-8 --devices 4 --train "
                                              "--steps 1 --report " + dir + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  std::map<std::string, nlohmann::json> runs;
  for (const auto& run : report["runs"]) runs[run["strategy"].get<std::string>()] = run;
  // Training comparisons run data parallelism, and only what can train this network.
  ASSERT_TRUE(runs.count("data")) << report.dump(2);
  // cnn's grouped layers split along their groups, its others into partial sums (issue 15).
  EXPECT_TRUE(runs.count("vertical")) << "cnn's convolutions train split by filters";
  const double single = runs["single"]["makespan_ms"]["median"].get<double>();
  const double data = runs["data"]["makespan_ms"]["median"].get<double>();
  EXPECT_EQ(runs["data"]["baseline_strategy"], "single");
  const std::string bar = data < single ? "data" : "single";
  const double bar_ms = std::min(data, single);
  for (const char* split : {"horizontal", "pipeline", "vertical"}) {
    ASSERT_TRUE(runs.count(split)) << split;
    EXPECT_EQ(runs[split]["baseline_strategy"], bar) << split;
    EXPECT_NEAR(runs[split]["speedup"].get<double>(), bar_ms / runs[split]["makespan_ms"]["median"].get<double>(),
                1e-9)
        << split;
  }
}

}  // namespace
}  // namespace train_test
}  // namespace splitscope::testing
