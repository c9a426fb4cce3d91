// --precision on run, compare and plan: the report and plan say it, the
// simulator runs every precision, and what cannot run it refuses before any
// work (docs/precision.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace precision_option_test {
namespace {

const std::string kSimData = "run mlp-small --strategy data --devices 2 --train --steps 1 --backend sim --machine "
                             "h100-nvlink-8 ";

TEST(PrecisionOption, TheCpuBackendRefusesTf32AndThePsStrategyBeforeAnyWork) {
  const std::string dir = fresh_temp_dir("precision-cpu");
  // tf32 is a math, not a storage: the cpu backend's products are full float32.
  const CommandResult tf32 = run_splitscope("run mlp-small --strategy single --devices 1 --quiet --precision tf32 "
                                            "--report " + dir + "/r.json");
  EXPECT_EQ(tf32.exit_code, 3) << tf32.err;
  EXPECT_NE(tf32.err.find("error: --precision tf32: the cpu backend runs fp32, bf16, fp16 and amp (its products are "
                          "full float32, not tf32); predict it with --backend sim --machine NAME (e.g. "
                          "h100-nvlink-8), or run tf32 on a GPU with --backend cuda"),
            std::string::npos)
      << tf32.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << "refused before any output";
  const CommandResult compare = run_splitscope("compare mlp-small --devices 2 --backend cpu --precision tf32");
  EXPECT_EQ(compare.exit_code, 3) << compare.err;
  EXPECT_EQ(compare.out, "");
  // The ps strategy's shards run apart from the plan's tasks, in float32.
  const CommandResult ps = run_splitscope("run mlp-small --strategy ps --devices 2 --train --steps 1 --quiet "
                                          "--precision amp --report " + dir + "/ps.json");
  EXPECT_EQ(ps.exit_code, 3) << ps.err;
  EXPECT_NE(ps.err.find("error: --precision amp: the cpu backend runs the ps strategy at fp32 only; predict it with "
                        "--backend sim"),
            std::string::npos)
      << ps.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/ps.json"));
}

std::vector<double> losses_of(const std::string& report_path) {
  return nlohmann::json::parse(read_text_file(report_path))["train"]["losses"].get<std::vector<double>>();
}

// The issue's case: data parallelism over 2 cpu devices, 5 steps of SGD with
// momentum, at each precision against fp32. A loss is the mean of -log p of
// the label, and p is stored in the format: a relative error of at most one
// rounding unit u in p moves -log p by at most about u (d(-log p) = dp / p),
// so step 1, whose only difference is the rounding, is within a few u; the
// bounds below give each format 2.5 u plus what the steps after add:
// - amp: the float32 masters take every update, so the trajectory stays
//   within the rounding (bf16, u = 2^-8 = 0.0039): 0.01 (measured 0.0019);
// - fp16 (u = 2^-11 = 0.00049), weights and momentum in fp16 too: 0.002
//   (measured 0.0004);
// - pure bf16: updates smaller than half a bf16 step of a weight are lost
//   (stored_precision.hpp; StoreUpdate in tests/exec), so its losses drift
//   from fp32's as it trains: 0.05 (measured 0.027 at step 5), and further
//   than amp's, which is why amp keeps masters.
TEST(PrecisionOption, TheCpuBackendTrainsAtHalfPrecisionWithinItsRounding) {
  const std::string dir = fresh_temp_dir("precision-cpu-train");
  const auto train = [&](const std::string& precision) {
    const CommandResult run = run_splitscope("run mlp-small --strategy data --devices 2 --train --steps 5 --quiet "
                                             "--backend cpu --precision " + precision + " --report " + dir + "/" +
                                             precision + ".json");
    EXPECT_EQ(run.exit_code, 0) << precision << ": " << run.err;
    return losses_of(dir + "/" + precision + ".json");
  };
  const std::vector<double> fp32 = train("fp32");
  ASSERT_EQ(fp32.size(), 5u);
  EXPECT_LT(fp32.back(), fp32.front() - 0.5) << "the network learns";
  double amp_drift = 0;
  double bf16_drift = 0;
  for (const auto& [precision, bound] : {std::pair{"amp", 0.01}, std::pair{"fp16", 0.002}, std::pair{"bf16", 0.05}}) {
    const std::vector<double> losses = train(precision);
    ASSERT_EQ(losses.size(), fp32.size()) << precision;
    for (size_t step = 0; step < losses.size(); ++step) {
      EXPECT_NEAR(losses[step], fp32[step], bound) << precision << " step " << step + 1;
      EXPECT_NE(losses[step], fp32[step]) << precision << " step " << step + 1 << ": the rounding is there";
    }
    const double drift = std::abs(losses.back() - fp32.back());
    if (std::string(precision) == "amp") amp_drift = drift;
    if (std::string(precision) == "bf16") bf16_drift = drift;
  }
  EXPECT_LT(amp_drift, bf16_drift) << "amp's float32 masters keep the updates pure bf16 loses";
}

// Both sides round every value they store in the same format, so a split
// differs from single only where it sums in another order (a step of the
// format at most, passed on), within precision_check_tolerance().
TEST(PrecisionOption, ASplitChecksAgainstSingleAtTheSamePrecision) {
  for (const std::string strategy : {"data", "tensor", "pipeline"}) {
    for (const std::string precision : {"bf16", "fp16", "amp"}) {
      const CommandResult run = run_splitscope("run mlp-small --strategy " + strategy + " --devices 2 --train "
                                               "--steps 3 --quiet --backend cpu --check --precision " + precision);
      EXPECT_EQ(run.exit_code, 0) << strategy << " " << precision << ": " << run.err;
      const std::string tolerance = precision == "fp16" ? "1e-02" : "5e-02";
      EXPECT_NE(run.out.find("against single on cpu (tolerance " + tolerance + ")"), std::string::npos) << run.out;
    }
  }
}

// A dense 4 -> 3 (ReLU), a dense 3 -> 2, softmax; batch 4 in halves over 2
// devices, SGD with momentum: 4·3 + 3 + 3·2 + 2 = 23 weights a device.
TEST(PrecisionOption, AnAmpRunOnCpuCountsItsBytesAtTheStoredPrecision) {
  const std::string dir = fresh_temp_dir("precision-cpu-bytes");
  const std::string net = dir + "/tiny.json";
  std::ofstream(net) << R"({"name": "tiny", "batch": 4, "input": [4], "layers": [
      {"type": "dense", "units": 3, "activation": "relu"}, {"type": "dense", "units": 2}, {"type": "softmax"}]})";
  const auto report = [&](const std::string& precision, const std::string& backend) {
    const std::string path = dir + "/" + precision + "-" + backend + ".json";
    const CommandResult run = run_splitscope("run " + net + " --strategy data --devices 2 --train --steps 1 --quiet "
                                             "--precision " + precision + " --report " + path + " --backend " +
                                             backend + (backend == "sim" ? " --machine h100-nvlink-8" : ""));
    EXPECT_EQ(run.exit_code, 0) << precision << " " << backend << ": " << run.err;
    return nlohmann::json::parse(read_text_file(path));
  };
  const auto amp = report("amp", "cpu");
  const auto fp32 = report("fp32", "cpu");
  EXPECT_EQ(amp["precision"], "amp");
  for (const auto& device : amp["per_device"]) {
    EXPECT_EQ(device["param_bytes"], 23 * (2 + 4));         // the bf16 copy and the float32 masters
    EXPECT_EQ(device["gradient_bytes"], 23 * 2);            // bf16 gradients
    EXPECT_EQ(device["optimizer_state_bytes"], 23 * 4);     // float32 momentum
    EXPECT_EQ(device["activations_peak_bytes"], 60);        // the 30 values fp32 stores in 120 bytes
    EXPECT_EQ(device["memory_peak_bytes"], 138 + 46 + 92 + 60);
  }
  EXPECT_EQ(fp32["per_device"][0]["activations_peak_bytes"], 120);
  EXPECT_EQ(fp32["per_device"][0]["param_bytes"], 23 * 4);
  // One all-reduce of the 23 bf16 gradients (46 B); a ring of 2: each device
  // sends half of them (23 B) in the reduce-scatter and half again in the
  // all-gather: 2 devices · 2 · 23 B = 92 B moved.
  const auto& reduce = amp["transfers"]["by_kind"][0];
  EXPECT_EQ(reduce["kind"], "all-reduce");
  EXPECT_EQ(reduce["payload_bytes"], 46);
  EXPECT_EQ(amp["transfers"]["bytes"], 92);
  EXPECT_EQ(fp32["transfers"]["bytes"], 184);
  // The simulator counts the same plan's bytes the same.
  const auto simulated = report("amp", "sim");
  EXPECT_EQ(simulated["transfers"]["bytes"], amp["transfers"]["bytes"]);
  for (size_t d = 0; d < 2; ++d) {
    for (const char* field : {"param_bytes", "gradient_bytes", "optimizer_state_bytes", "activations_peak_bytes",
                              "memory_peak_bytes"}) {
      EXPECT_EQ(simulated["per_device"][d][field], amp["per_device"][d][field]) << field << " of device " << d;
    }
  }
}

// validate measures what its backend runs at the precision: the cpu
// backend's half precisions are float32 math with rounded storage, whose
// times are not those precisions' to score a prediction by.
TEST(PrecisionOption, ValidateOnCpuMeasuresFp32AndRefusesTheRestBeforeAnyRun) {
  const std::string dir = fresh_temp_dir("precision-validate");
  for (const std::string precision : {"bf16", "fp16", "amp", "tf32"}) {
    const CommandResult run = run_splitscope("validate --backend cpu --networks mlp-small --quiet --precision " +
                                             precision + " --report " + dir + "/v.json");
    EXPECT_EQ(run.exit_code, 3) << precision << ": " << run.err;
    EXPECT_NE(run.err.find("error: --precision " + precision + ": validate --backend cpu measures fp32 only"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("--check --precision " + precision), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_FALSE(std::filesystem::exists(dir + "/v.json"));
  }
  const CommandResult cuda = run_splitscope("validate --backend cuda --networks mlp-small --quiet --precision amp");
  EXPECT_EQ(cuda.exit_code, 3) << cuda.err;
  EXPECT_NE(cuda.err.find("the cuda backend stores float32 tensors"), std::string::npos) << cuda.err;
  // fp32, named or not, measures and says so in the report.
  const CommandResult fp32 = run_splitscope("validate --backend cpu --networks mlp-small --strategies data --repeat 1 "
                                            "--quiet --precision fp32 --report " + dir + "/fp32.json");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  EXPECT_EQ(fp32.out.rfind("validate: cpu measured, predicted on cpu-2", 0), 0u) << fp32.out;
  EXPECT_EQ(nlohmann::json::parse(read_text_file(dir + "/fp32.json"))["precision"], "fp32");
}

TEST(PrecisionOption, AnEnsembleStoresItsMembersAtThePrecision) {
  const std::string dir = fresh_temp_dir("precision-ensemble");
  const std::string sim = "ensemble mlp-small mlp-small --backend sim --machine h100-nvlink-8 --report ";
  const CommandResult fp32 = run_splitscope(sim + dir + "/fp32.json");
  const CommandResult amp = run_splitscope(sim + dir + "/amp.json --precision amp");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  ASSERT_EQ(amp.exit_code, 0) << amp.err;
  EXPECT_NE(amp.out.find("ensemble of 2 on 2 devices, precision amp, predicted on h100-nvlink-8"), std::string::npos)
      << amp.out;
  EXPECT_NE(fp32.out.find("ensemble of 2 on 2 devices, predicted on h100-nvlink-8"), std::string::npos) << fp32.out;
  const auto fp32_report = nlohmann::json::parse(read_text_file(dir + "/fp32.json"));
  const auto amp_report = nlohmann::json::parse(read_text_file(dir + "/amp.json"));
  EXPECT_EQ(fp32_report["precision"], "fp32");
  EXPECT_EQ(amp_report["precision"], "amp");
  // bf16 products at 989.5 TFLOP/s and half the bytes: each member answers sooner.
  EXPECT_LT(amp_report["members"][0]["alone_ms"].get<double>(), fp32_report["members"][0]["alone_ms"].get<double>());
  // The cpu backend runs it by rounding what it stores; tf32 it refuses.
  const CommandResult cpu = run_splitscope("ensemble mlp-small mlp-small --backend cpu --quiet --precision bf16");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_NE(cpu.out.find("precision bf16, measured on cpu"), std::string::npos) << cpu.out;
  EXPECT_EQ(run_splitscope("ensemble mlp-small mlp-small --backend cpu --precision tf32").exit_code, 3);
}

TEST(PrecisionOption, DemoAndLessonsTakeFp32OnlyAndSayWhy) {
  const CommandResult demo = run_splitscope("demo rnn --backend sim --precision amp");
  EXPECT_EQ(demo.exit_code, 3) << demo.err;
  EXPECT_NE(demo.err.find("error: --precision amp: demo rnn judges the layer split against one device running the "
                          "stack fused"),
            std::string::npos)
      << demo.err;
  EXPECT_EQ(demo.out, "");
  const CommandResult lessons = run_splitscope("lessons --only 1 --precision bf16");
  EXPECT_EQ(lessons.exit_code, 2) << lessons.err;
  EXPECT_NE(lessons.err.find("the lessons test classic claims in fp32"), std::string::npos) << lessons.err;
  EXPECT_EQ(lessons.out, "");
  EXPECT_EQ(run_splitscope("lessons --only 1 --precision fp32 --quiet").exit_code, 0);
}

TEST(PrecisionOption, BadNamesAndMissingPeaksAreBadInput) {
  const CommandResult unknown = run_splitscope(kSimData + "--precision fp64");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown precision 'fp64'; use fp32, tf32, bf16, fp16 or amp"), std::string::npos)
      << unknown.err;
  // P100 has no bf16 (nor tf32): amp computes in bf16.
  const CommandResult p100 = run_splitscope("run mlp-small --strategy data --devices 2 --train --steps 1 --backend "
                                            "sim --machine p100-pcie-8 --precision amp");
  EXPECT_EQ(p100.exit_code, 2);
  EXPECT_NE(p100.err.find("device.peak_tflops.bf16"), std::string::npos) << p100.err;
  EXPECT_EQ(run_splitscope("run mlp-small --strategy data --devices 2 --backend sim --machine p100-pcie-8 "
                           "--precision fp16").exit_code,
            0);
  // A calibrated machine's op times were measured in float32.
  const CommandResult calibrated = run_splitscope(
      "run mlp-small --strategy single --devices 1 --backend sim --machine h100-80gb-hbm3 --precision bf16");
  EXPECT_EQ(calibrated.exit_code, 2);
  EXPECT_NE(calibrated.err.find("calibration"), std::string::npos) << calibrated.err;
}

TEST(PrecisionOption, TheReportNamesItAndCountsItsBytes) {
  const std::string dir = fresh_temp_dir("precision-report");
  const CommandResult fp32 = run_splitscope(kSimData + "--report " + dir + "/fp32.json");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  const CommandResult amp = run_splitscope(kSimData + "--precision amp --report " + dir + "/amp.json");
  ASSERT_EQ(amp.exit_code, 0) << amp.err;
  const auto fp32_report = nlohmann::json::parse(read_text_file(dir + "/fp32.json"));
  const auto amp_report = nlohmann::json::parse(read_text_file(dir + "/amp.json"));
  // The first line says a precision other than the default; fp32's reads as it always did.
  EXPECT_EQ(amp.out.rfind("mlp-small, batch 8, precision amp: data over 2 devices, sim", 0), 0u) << amp.out;
  EXPECT_EQ(fp32.out.rfind("mlp-small, batch 8: data over 2 devices, sim", 0), 0u) << fp32.out;
  EXPECT_EQ(fp32_report["precision"], "fp32");
  EXPECT_EQ(amp_report["precision"], "amp");
  // The gradient all-reduce moves bf16 gradients: half the bytes.
  EXPECT_EQ(2 * amp_report["transfers"]["bytes"].get<int64_t>(), fp32_report["transfers"]["bytes"].get<int64_t>());
  EXPECT_NE(amp_report["machine"]["facts"]["matrix math"].get<std::string>().find("bf16 at 989.5 TFLOP/s"),
            std::string::npos);
  EXPECT_LT(amp_report["makespan_ms"]["median"].get<double>(), fp32_report["makespan_ms"]["median"].get<double>());
}

TEST(PrecisionOption, PlanJsonSaysThePrecisionAndItsMemory) {
  const CommandResult fp32 = run_splitscope("plan mlp-small --strategy data --devices 2 --train --json");
  const CommandResult bf16 = run_splitscope("plan mlp-small --strategy data --devices 2 --train --json --precision bf16");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  const auto a = nlohmann::json::parse(fp32.out);
  const auto b = nlohmann::json::parse(bf16.out);
  EXPECT_EQ(a["precision"], "fp32");
  EXPECT_EQ(b["precision"], "bf16");
  EXPECT_EQ(2 * b["per_device"][0]["memory_peak_bytes"].get<int64_t>(), a["per_device"][0]["memory_peak_bytes"].get<int64_t>());
}

}  // namespace
}  // namespace precision_option_test
}  // namespace splitscope::testing
