// The file's weights run (docs/onnx.md, "Weights"): the cpu backend's output
// on splitscope's own input equals PyTorch's on the same input, which
// export_models.py computed from the same modules (tests/onnx/models/
// reference.json), within run --check's relative tolerance.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

/// run --check's measure: max |output - reference| over max |reference|.
double max_relative_error(const std::vector<float>& output, const std::vector<double>& reference) {
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(output[i]) - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return worst / scale;
}

nlohmann::json references() {
  return nlohmann::json::parse(read_text_file(onnx_model_path("reference.json")))["models"];
}

/// `run` of `model` on the cpu backend with `strategy_args`, its saved output against PyTorch's.
void expect_pytorchs_output(const std::string& model, const std::string& strategy_args) {
  const nlohmann::json reference = references()[model];
  ASSERT_TRUE(reference.is_object()) << model << " is not in reference.json";
  const std::string dir = fresh_temp_dir("onnx-weights-" + model);
  const std::string args = "run " + onnx_model_path(model + ".onnx") + " --batch " +
                           std::to_string(reference["batch"].get<int>()) + " " + strategy_args +
                           " --backend cpu --repeat 1 --warmup 0 --quiet --save-output " + dir + "/out.npy";
  const CommandResult result = run_splitscope(args);
  ASSERT_EQ(result.exit_code, 0) << args << "\n" << result.err;
  EXPECT_EQ(result.err.find("splitscope's own weights"), std::string::npos) << args << ": the file's weights were not used\n"
                                                                          << result.err;
  const NpyArray output = read_npy(dir + "/out.npy");
  EXPECT_EQ(output.shape, reference["shape"].get<std::vector<int64_t>>()) << args;
  const auto expected = reference["output"].get<std::vector<double>>();
  ASSERT_EQ(output.values.size(), expected.size()) << args;
  EXPECT_LE(max_relative_error(output.values, expected), 1e-4) << args;
}

TEST(OnnxWeights, EveryExportRunsOnTheCpuWithTheFilesWeightsAndGivesPyTorchsOutput) {
  // The dense layers of Gemm (transposed) and of MatMul + Add, layer norm, convolutions with and without bias,
  // grouped and strided, batch norm with the file's running statistics, both pools, a residual add, two inputs
  // joined by a concat, and two-layer LSTM and GRU stacks with their gates reordered.
  for (const std::string model : {"mlp", "cnn", "residual", "two-tower", "lstm", "gru"}) {
    SCOPED_TRACE(model);
    expect_pytorchs_output(model, "--strategy single --devices 1");
  }
}

TEST(OnnxWeights, SplitsOfAnExportComputeThemToo) {
  // Each device materialises its own slice of the file's tensors: row and column slices of a dense layer,
  // filter slices of a convolution, a cell's gate columns.
  expect_pytorchs_output("mlp", "--strategy tensor --devices 2");
  expect_pytorchs_output("cnn", "--strategy vertical --devices 2");
  expect_pytorchs_output("lstm", "--strategy vertical --devices 2");
  expect_pytorchs_output("two-tower", "--strategy branches --devices 2");
}

TEST(OnnxWeights, TheGptRunsWithItsWeightsOnOneDeviceAndSplitByHeadsAndSamples) {
  // The token and position tables, the layer norms (decomposed at opset 14, one node at 17), the linear layers
  // (MatMul's W [in, out] as it is), causal attention and GELU: PyTorch's logits within 1e-4.
  // Q, K and V from three Linears: their weights joined column-wise into the one linear (and the causal mask
  // added rather than filled in); attention without a mask (every position sees all).
  // At opset 11 with fresh layer norms, whose equal gains and shifts the exporter reads through Identity nodes.
  for (const std::string model : {"gpt", "gpt-opset17", "gpt-separate-qkv", "gpt-unmasked", "gpt-opset11"}) {
    SCOPED_TRACE(model);
    expect_pytorchs_output(model, "--strategy single --devices 1");
  }
  expect_pytorchs_output("gpt", "--strategy tensor --devices 2");
  expect_pytorchs_output("gpt-separate-qkv", "--strategy tensor --devices 2");
  expect_pytorchs_output("gpt-unmasked", "--strategy tensor --devices 2");
  expect_pytorchs_output("gpt", "--strategy data --devices 2");
}

TEST(OnnxWeights, AGruWhoseRecurrentNewGateBiasIsNotZeroRunsOnSplitscopesWeightsAndSaysSo) {
  const std::string args = "run " + onnx_model_path("gru-recurrent-bias.onnx") +
                           " --strategy single --devices 1 --backend cpu --repeat 1 --warmup 0 --quiet";
  const CommandResult result = run_splitscope(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const std::string words : {"note: ", "gru-recurrent-bias.onnx", "(GRU)", "b_hn", "splitscope's own weights"}) {
    EXPECT_NE(result.err.find(words), std::string::npos) << words << "\n" << result.err;
  }
}

}  // namespace
}  // namespace splitscope::testing
