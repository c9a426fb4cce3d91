// End to end: inputs past splitscope's limits are refused at once, before any
// large loop or allocation (issue 19, finding 1). Each case used to run past
// a minute or fill the memory.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace limits_test {
namespace {

constexpr const char* kOpLimit =
    "brings the unrolled network past 1048576 ops, more than a run can schedule; use fewer steps or stacked layers\n";

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Limits, AHugeStackIsRefusedBeforeItsParametersAreCounted) {
  const std::string dir = fresh_temp_dir("limits-stack");
  for (const char* layers : {"1099511627776", "10000000000"}) {
    const std::string path = write_file(
        dir, std::string("lstm-") + layers + ".json",
        std::string(R"({"batch": 2, "input": [3, 4], "layers": [{"type": "lstm", "hidden": 4, "layers": )") + layers +
            "}]}");
    const CommandResult result = run_splitscope("inspect " + path);
    EXPECT_EQ(result.exit_code, 2) << layers;
    EXPECT_EQ(result.err, "error: " + path + ": layers[0]: " + kOpLimit);
  }
}

TEST(Limits, TheDemoRefusesAHugeStackAtOnce) {
  const CommandResult result = run_splitscope("demo rnn --backend sim --layers 1099511627776 --hidden 1 --steps 1");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, std::string("error: --layers/--hidden/--steps/--batch: 1099511627776 layers × 1 hidden over 1 "
                                    "steps, batch 64: layers[0]: ") +
                            kOpLimit);
}

TEST(Limits, CompareNamesTheMostDevicesWithoutCountingDown) {
  const CommandResult result =
      run_splitscope("compare mlp-small --backend sim --machine h100-nvlink-8 --devices 2147483647");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "error: --devices: no strategy can split mlp-small over 2147483647 devices (at most 10); "
                        "give fewer\n");
}

TEST(Limits, MicrobatchesAreHeldToTheOpLimit) {
  const CommandResult run = run_splitscope(
      "run mlp-small --strategy pipeline --devices 2 --microbatches 1000000 --batch 1000000 --backend sim "
      "--machine h100-nvlink-8");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "error: --microbatches: 1000000 micro-batches of the 7 ops of mlp-small make more than 1048576 "
                     "ops, more than a run can schedule; use at most 149796\n");
  // A 3-layer net with batch 2^40: `plan` took 11 GB, or advised --backend sim, which plan does not have.
  const std::string dir = fresh_temp_dir("limits-microbatches");
  const std::string path = write_file(
      dir, "b40.json",
      R"({"batch": 1099511627776, "input": [1], "layers": [{"type": "relu"}, {"type": "relu"}, {"type": "relu"}]})");
  for (const char* microbatches : {"10000000", "2000000000"}) {
    const CommandResult plan =
        run_splitscope("plan " + path + " --strategy pipeline --devices 2 --microbatches " + microbatches);
    EXPECT_EQ(plan.exit_code, 2) << microbatches;
    EXPECT_EQ(plan.err, std::string("error: --microbatches: ") + microbatches +
                            " micro-batches of the 4 ops of b40 make more than 1048576 ops, more than a run can "
                            "schedule; use at most 262144\n");
  }
}

TEST(Limits, InputFilesAreReadUpTo64MiB) {
  constexpr const char* kTooLarge =
      "/dev/zero: is larger than 64 MiB, the most splitscope reads from an input file; is it the right file?\n";
  const std::string dir = fresh_temp_dir("limits-read");
  for (const std::string& args :
       {std::string("inspect /dev/zero"), "calibrate --from /dev/zero --out " + dir + "/m.json",
        std::string("run mlp-small --strategy single --devices 1 --backend sim --machine /dev/zero")}) {
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 2) << args;
    EXPECT_EQ(result.err, std::string("error: ") + kTooLarge) << args;
  }
}

TEST(Limits, TheDemoRefusesWhatDoesNotFitInMemoryAsRunDoes) {
  // 4 × LSTM 131072: 2 TiB of weights, past any machine this runs on.
  const char* kDoesNotFit = "error: --backend cpu: the run needs 2048.";
  const char* kParts = " GiB (activations 0.0, weights 2048.0, gradients 0.0, optimizer state 0.0, kernel workspace ";
  const char* kWhatToDo = "; use a smaller --batch or network, or predict it with --backend sim\n";
  const CommandResult demo = run_splitscope("demo rnn --backend cpu --hidden 131072 --steps 2 --batch 1");
  EXPECT_EQ(demo.exit_code, 2);
  EXPECT_EQ(demo.err.rfind(kDoesNotFit, 0), 0u) << demo.err;
  EXPECT_NE(demo.err.find(kParts), std::string::npos) << demo.err;
  EXPECT_NE(demo.err.find("available now, less a margin of "), std::string::npos) << demo.err;
  EXPECT_EQ(demo.err.substr(demo.err.size() - std::string(kWhatToDo).size()), kWhatToDo) << demo.err;
  EXPECT_TRUE(demo.out.empty()) << demo.out;
  // A sweep admits every point before it runs any.
  const CommandResult sweep =
      run_splitscope("demo rnn --backend cpu --steps 2 --batch 1 --sweep hidden=16,131072 --quiet");
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_EQ(sweep.err.rfind("error: --sweep: hidden=131072: --backend cpu: the run needs 2048.", 0), 0u)
      << sweep.err;
  EXPECT_TRUE(sweep.out.empty()) << sweep.out;
}

TEST(Limits, ALayerSplitOverManyDevicesIsQuick) {
  // 200,000 relu layers over 10,000 devices once took 53 s, linear in the
  // devices. Half that many over 50,000 devices: a quadratic step (2.5e9)
  // would still blow the bound, and under ASan (about 14x slower here) the
  // run stays well inside it.
  const std::string dir = fresh_temp_dir("limits-devices");
  std::string layers;
  for (int i = 0; i < 100000; ++i) layers += std::string(i == 0 ? "" : ",") + R"({"type":"relu"})";
  const std::string path = write_file(dir, "relu.json", R"({"batch": 1, "input": [4], "layers": [)" + layers + "]}");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = run_splitscope("plan " + path + " --strategy horizontal --devices 50000");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("in 49999 transfer(s)"), std::string::npos);
  EXPECT_LT(seconds, 30.0) << "about 1.5 s on a 2-core machine, 12 s under ASan";
}

/// Runs `args`, which must be refused with exit 2 in under 10 s; returns its error line.
std::string refusal_of(const std::string& args) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = run_splitscope(args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 2) << args << ": " << result.err;
  EXPECT_LT(seconds, 10.0) << args;
  EXPECT_TRUE(result.out.empty()) << args;
  return result.err;
}

/// The `N` of "a plan of N ops" in a refusal of the recorded spans.
int64_t plan_ops_in(const std::string& message) {
  const size_t at = message.find("a plan of ");
  return at == std::string::npos ? -1 : std::stoll(message.substr(at + 10));
}

TEST(Limits, RunsThatWouldRecordPastTheLimitAreRefusedBeforeTheFirst) {
  struct Case {
    std::string args;
    std::string option;
    std::string runs;
    int64_t workers;
  };
  const std::vector<Case> cases{
      // A record per step grew 13 MB/s until the kernel killed the run.
      {"run mlp-small --strategy single --devices 1 --train --steps 1000000000 --backend cpu", "--steps",
       "1000000000 steps", 1},
      {"run mlp-small --strategy data --devices 2 --repeat 100000000 --jitter lognormal:0.3 --backend sim "
       "--machine h100-nvlink-8",
       "--repeat", "100000000 runs", 1},
      {"run cnn --batch 16 --train --strategy ps --async --devices 4 --steps 100000000 --backend sim "
       "--machine h100-nvlink-8",
       "--steps", "100000000 steps", 4},  // 4 workers, and a shard on a device of its own
  };
  for (const Case& c : cases) {
    const std::string err = refusal_of(c.args);
    const int64_t ops = plan_ops_in(err);
    ASSERT_GT(ops, 0) << err;
    const int64_t per_run = ops * c.workers;
    const std::string workers = c.workers > 1 ? " on " + std::to_string(c.workers) + " workers" : "";
    EXPECT_EQ(err, "error: " + c.option + ": " + c.runs + " of a plan of " + std::to_string(ops) + " ops" + workers +
                       " would record " + fmt::format("{:.3g}", std::stod(c.runs) * double(per_run)) +
                       " op spans, past the limit of 4194304 (docs/limits.md); give at most " +
                       std::to_string((int64_t{1} << 22) / per_run) + "\n")
        << c.args;
  }
  // An input stream's windows hold its batches' preparations and copies too
  // (issue 54 item 15: a million repeats grew to 4.9 GB in 164 s): mlp-small's
  // data plan on 2 devices reads its input on both, so with --prefetch 1 a
  // window holds 2 batches x (1 preparation + 2 copies) + the step marker.
  const std::string err = refusal_of(
      "run mlp-small --strategy data --devices 2 --repeat 1000000 --input-cost-us-per-sample 5 --prefetch 1 "
      "--backend sim --machine h100-nvlink-8");
  const int64_t ops = plan_ops_in(err);
  ASSERT_GT(ops, 0) << err;
  const int64_t per_run = ops + 7;
  EXPECT_EQ(err, "error: --repeat: 1000000 runs of a plan of " + std::to_string(ops) +
                     " ops and 7 input-stream spans a step would record " +
                     fmt::format("{:.3g}", 1e6 * double(per_run)) +
                     " op spans, past the limit of 4194304 (docs/limits.md); give at most " +
                     std::to_string((int64_t{1} << 22) / per_run) + "\n");
}

TEST(Limits, APlanPastItsOpLimitIsRefusedAsItIsBuilt) {
  // 15,000 layers, each split over 64 devices forward and backward: about 2.9
  // million ops. (A 100,000-layer chain like it was once killed at 19.3 GB.)
  const std::string dir = fresh_temp_dir("limits-plan-ops");
  std::string layers;
  for (int i = 0; i < 15000; ++i) layers += std::string(i == 0 ? "" : ",") + R"({"type":"dense","units":64})";
  const std::string path =
      write_file(dir, "chain.json", R"({"name": "chain", "batch": 1, "input": [64], "layers": [)" + layers + "]}");
  EXPECT_EQ(refusal_of("plan " + path + " --strategy vertical --devices 64 --train"),
            "error: --devices: the vertical plan of chain over 64 devices has more than 2097152 ops, the most a plan "
            "may have (docs/limits.md); give fewer devices, another strategy, or a network of fewer layers\n");
}

TEST(Limits, CollectivesPastTheirSendLimitAreRefused) {
  // 2 M chunks of 512 KiB, each over 63 hops: 97 s and 15.6 GB once.
  EXPECT_EQ(refusal_of("collective broadcast --devices 64 --bytes 1024G --backend sim --machine 8x8-h100-ib"),
            "error: --bytes: a broadcast of 1099511627776 bytes over 64 devices unrolls into 132120576 sends, past "
            "the limit of 4194304 (docs/limits.md); give fewer bytes or devices\n");
  // A data plan over 4,096 devices across 512 nodes, where the host issues
  // every send in turn (host_issue_us): each gradient's ring all-reduce runs
  // its 2 x 4095 x 4096 sends one by one (docs/collective.md).
  const std::string dir = fresh_temp_dir("limits-sends");
  const auto machine_of = [&](const std::string& preset, const std::string& name, double host_issue_us = 0) {
    nlohmann::json machine = nlohmann::json::parse(
        read_text_file(std::string(std::getenv("SPLITSCOPE_MODELS")) + "/machines/" + preset + ".json"));
    machine["devices"] = 4096;
    machine["name"] = name;
    if (host_issue_us > 0) machine["device"]["host_issue_us"] = host_issue_us;
    return write_file(dir, name + ".json", machine.dump());
  };
  const std::string command = "run mlp-small --strategy data --devices 4096 --batch 4096 --train --backend sim --machine ";
  const CommandResult issued = run_splitscope(command + machine_of("8x8-h100-ib", "issued", 1));
  EXPECT_EQ(issued.exit_code, 2);
  EXPECT_EQ(issued.err, "error: --devices: an all-reduce of 2600 bytes over 4096 devices unrolls into 33546240 sends, "
                        "past the limit of 4194304 (docs/limits.md); give fewer devices\n");
  // On one switch the same rings run in step groups (issue 53): no send is
  // unrolled, and the run finishes (0.6 s here, where it was refused); across
  // nodes with no host lane, in mixed step groups (issue 53, multi-tier
  // networks), where they were refused too.
  for (const auto& [preset, name] : {std::pair{"h100-nvlink-8", "switch"}, std::pair{"8x8-h100-ib", "nodes"}}) {
    const CommandResult grouped = run_splitscope(command + machine_of(preset, name));
    EXPECT_EQ(grouped.exit_code, 0) << name << ": " << grouped.err;
    EXPECT_NE(grouped.out.find("verdict: "), std::string::npos) << grouped.out;
  }
}

TEST(Limits, InspectOfAWideConcatStaysSmall) {
  // Every row was padded to the concat's `reads` cell: 690 MB for 10,000 branches.
  const std::string dir = fresh_temp_dir("limits-concat");
  std::string layers;
  std::string names;
  for (int i = 0; i < 10000; ++i) {
    layers += fmt::format(R"({{"name": "b{}", "type": "relu", "inputs": "input"}},)", i);
    names += fmt::format("{}\"b{}\"", i == 0 ? "" : ",", i);
  }
  const std::string path = write_file(dir, "wide.json", R"({"name": "wide", "batch": 1, "input": [2], "layers": [)" +
                                                            layers + R"({"name": "c", "type": "concat", "inputs": [)" +
                                                            names + "]}]}");
  const CommandResult result = run_splitscope("inspect " + path);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(result.out.size(), size_t{2} << 20) << "10,001 rows of a bounded width";
  EXPECT_NE(result.out.find("b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, ... 9990 more"), std::string::npos);
}

}  // namespace
}  // namespace limits_test
}  // namespace splitscope::testing
