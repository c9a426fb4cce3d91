// The exports run: every strategy that applies, on the cpu backend, with
// --check (each output against single's), and the other commands on them.

#include <gtest/gtest.h>

#include <string>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

TEST(OnnxRun, EveryStrategyPassesTheCheckOnTheMlpAndCnn) {
  for (const std::string model : {"mlp.onnx", "cnn.onnx --batch 4"}) {
    for (const std::string strategy : {"data", "horizontal", "pipeline", "vertical", "tensor"}) {
      const std::string microbatches = strategy == "pipeline" ? " --microbatches 2" : "";
      const std::string args = "run " + onnx_model_path(model) + " --strategy " + strategy +
                               " --devices 2 --backend cpu --repeat 1 --warmup 0 --check" + microbatches;
      const CommandResult result = run_splitscope(args);
      EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
      EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << args << "\n" << result.out;
    }
  }
}

TEST(OnnxRun, GraphsSplitByBranchesAndTrain) {
  // The residual block's skip holds no layer, so branches has nothing to place: vertical splits it.
  for (const std::string model : {"residual.onnx --strategy vertical", "two-tower.onnx --strategy branches"}) {
    const std::string args = "run " + onnx_model_path(model) + " --devices 2 --backend cpu --repeat 1 --warmup 0 --check";
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
    EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << args << "\n" << result.out;
  }
  const std::string train = "run " + onnx_model_path("cnn.onnx") +
                            " --batch 4 --strategy vertical --devices 2 --backend cpu --train --steps 2 --check";
  const CommandResult result = run_splitscope(train);
  EXPECT_EQ(result.exit_code, 0) << train << "\n" << result.err;
}

TEST(OnnxRun, TheGptPassesTheCheckOnOneDeviceBySamplesAndByHeads) {
  for (const std::string strategy : {"single --devices 1", "data --devices 2", "tensor --devices 2",
                                     "tensor --devices 2 --train --steps 2", "pipeline --devices 2 --train --steps 2"}) {
    const std::string repeat = strategy.find("--train") == std::string::npos ? " --repeat 1 --warmup 0" : "";
    const std::string args = "run " + onnx_model_path("gpt.onnx") + " --strategy " + strategy +
                             " --backend cpu --check" + repeat;
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
    EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << args << "\n" << result.out;
  }
  // By heads: the run says how the tensor strategy split the imported attention.
  const CommandResult tensor = run_splitscope("run " + onnx_model_path("gpt.onnx") +
                                              " --strategy tensor --devices 2 --backend cpu --repeat 1 --warmup 0");
  EXPECT_NE(tensor.out.find("attention split by heads"), std::string::npos) << tensor.out;
  // compare on the simulator: a verdict on each strategy's row.
  const CommandResult compare =
      run_splitscope("compare " + onnx_model_path("gpt.onnx") + " --devices 2 --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  for (const std::string strategy : {"single", "tensor", "pipeline"}) {
    const size_t row = compare.out.find("\n" + strategy + " ");
    ASSERT_NE(row, std::string::npos) << strategy << "\n" << compare.out;
    const std::string line = compare.out.substr(row + 1, compare.out.find('\n', row + 1) - row - 1);
    EXPECT_TRUE(line.find(" even ") != std::string::npos || line.find(" wins ") != std::string::npos ||
                line.find(" loses ") != std::string::npos)
        << line;
  }
}

TEST(OnnxRun, EveryExportPlansAndComparesOnTheSimulator) {
  for (const std::string model : {"mlp.onnx", "cnn.onnx --batch 8", "residual.onnx", "two-tower.onnx", "lstm.onnx",
                                  "gru.onnx", "gpt.onnx"}) {
    const CommandResult plan = run_splitscope("plan " + onnx_model_path(model) + " --strategy horizontal --devices 2");
    EXPECT_EQ(plan.exit_code, 0) << model << "\n" << plan.err;
    const CommandResult compare =
        run_splitscope("compare " + onnx_model_path(model) + " --devices 2 --backend sim --machine h100-nvlink-8");
    EXPECT_EQ(compare.exit_code, 0) << model << "\n" << compare.err;
    EXPECT_NE(compare.out.find("best: "), std::string::npos) << model << "\n" << compare.out;
  }
}

TEST(OnnxRun, ValidateSweepAndEnsembleTakeOnnxFiles) {
  const std::string mlp = onnx_model_path("mlp.onnx");
  const CommandResult sweep =
      run_splitscope("sweep --over devices=1,2 run " + mlp + " --strategy data --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  const CommandResult ensemble =
      run_splitscope("ensemble " + mlp + " " + mlp + " --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(ensemble.exit_code, 0) << ensemble.err;
  const CommandResult validate =
      run_splitscope("validate --networks " + mlp + " --strategies vertical --backend cpu --repeat 1");
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find("mlp on 2:"), std::string::npos) << validate.out;
}

}  // namespace
}  // namespace splitscope::testing
