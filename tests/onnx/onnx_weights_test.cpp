// The file's weights run (docs/onnx.md, "Weights"): the cpu backend's output
// on splitscope's own input equals PyTorch's on the same input, which
// export_models.py computed from the same modules (tests/onnx/models/
// reference.json), within run --check's relative tolerance.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

/// A float32 .npy file's shape and elements (what --save-output writes: format 1.0, '<f4', C order).
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_text_file(path);
  NpyArray out;
  EXPECT_GE(bytes.size(), 10u) << path;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return out;
  const size_t header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_length);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  for (size_t at = 0; at < dims.size();) {
    const size_t comma = dims.find(',', at);
    const std::string dim = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (dim.find_first_of("0123456789") != std::string::npos) out.shape.push_back(std::stoll(dim));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const size_t data = 10 + header_length;
  out.values.resize((bytes.size() - data) / sizeof(float));
  std::memcpy(out.values.data(), bytes.data() + data, out.values.size() * sizeof(float));
  return out;
}

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
  EXPECT_EQ(result.err.find("note:"), std::string::npos) << args << ": the file's weights were not used\n" << result.err;
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
