// --precision on run, compare and plan: the report and plan say it, the
// simulator runs every precision, and what cannot run it refuses before any
// work (docs/precision.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace precision_option_test {
namespace {

const std::string kSimData = "run mlp-small --strategy data --devices 2 --train --steps 1 --backend sim --machine "
                             "h100-nvlink-8 ";

TEST(PrecisionOption, TheCpuBackendRefusesAllButFp32BeforeAnyWork) {
  const std::string dir = fresh_temp_dir("precision-cpu");
  for (const std::string precision : {"tf32", "bf16", "fp16", "amp"}) {
    const CommandResult run = run_splitscope("run mlp-small --strategy single --devices 1 --quiet --precision " +
                                             precision + " --report " + dir + "/r.json");
    EXPECT_EQ(run.exit_code, 3) << precision << ": " << run.err;
    EXPECT_NE(run.err.find("error: --precision " + precision + ": the cpu backend computes in float32 only; "
                           "predict it with --backend sim"),
              std::string::npos)
        << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << "refused before any output";
  }
  const CommandResult compare = run_splitscope("compare mlp-small --devices 2 --backend cpu --precision amp");
  EXPECT_EQ(compare.exit_code, 3) << compare.err;
  EXPECT_EQ(compare.out, "");
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
