// `inspect` on the PyTorch exports: FLOPs and parameters by hand (the
// arithmetic of docs/network-format.md, "Counting"), and parameters against
// PyTorch's own sum(p.numel()) that export_models.py wrote into params.json.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

int64_t pytorch_params(const std::string& model) {
  const auto recorded = nlohmann::json::parse(read_text_file(onnx_model_path("params.json")));
  return recorded.at("params").at(model).get<int64_t>();
}

std::vector<std::string> layer_types(const nlohmann::json& report) {
  std::vector<std::string> types;
  for (const auto& layer : report.at("layers")) types.push_back(layer.at("type").get<std::string>());
  return types;
}

TEST(OnnxInspect, MlpCountsAreTheDenseLayersByHand) {
  const auto report = inspect_onnx(onnx_model_path("mlp.onnx"));
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report.at("batch"), 4);  // the graph input's fixed batch
  // Gemm 32->64, LayerNorm(64), MatMul+Add 64->48, Gemm 48->24, Gemm 24->10.
  const int64_t params = (32 * 64 + 64) + 2 * 64 + (64 * 48 + 48) + (48 * 24 + 24) + (24 * 10 + 10);
  const int64_t flops = 2 * 4 * (32 * 64 + 64 * 48 + 48 * 24 + 24 * 10);
  EXPECT_EQ(report.at("params"), params);
  EXPECT_EQ(report.at("params"), pytorch_params("mlp"));
  EXPECT_EQ(report.at("flops"), flops);
  EXPECT_EQ(layer_types(report), (std::vector<std::string>{"dense", "layer_norm", "relu", "dense", "sigmoid", "dense",
                                                           "tanh", "dense", "softmax"}));
  // The MatMul's Add became its bias: no add layer, and the dense layer counts 48 biases.
  EXPECT_EQ(report.at("layers")[3].at("params"), 64 * 48 + 48);
}

TEST(OnnxInspect, CnnWithBatchNormAndGlobalPoolingCountsByHand) {
  // The export has a dynamic batch: --batch gives it.
  const auto report = inspect_onnx(onnx_model_path("cnn.onnx"), "--batch 2");
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report.at("batch"), 2);
  const int64_t batch = 2;
  // conv1 3->8 3x3 pad 1 on 16x16 (no bias), bn 8; maxpool 2 -> 8x8;
  // conv2 8->16 3x3 stride 2 pad 1 groups 2 -> 4x4 (no bias), bn 16; avgpool 2 -> 2x2;
  // conv3 1x1 16->16 with bias; global average pool -> 16; dense 16->10.
  const int64_t params = 8 * 3 * 9 + 2 * 8 + 16 * (8 / 2) * 9 + 2 * 16 + (16 * 16 + 16) + (16 * 10 + 10);
  const int64_t flops = batch * (2 * 8 * 16 * 16 * 3 * 9 + 2 * 16 * 4 * 4 * (8 / 2) * 9 + 2 * 16 * 2 * 2 * 16 +
                                 2 * 16 * 10);
  EXPECT_EQ(report.at("params"), params);
  EXPECT_EQ(report.at("params"), pytorch_params("cnn"));
  EXPECT_EQ(report.at("flops"), flops);
  EXPECT_EQ(layer_types(report), (std::vector<std::string>{"conv2d", "batch_norm", "relu", "maxpool", "conv2d",
                                                           "batch_norm", "relu", "avgpool", "conv2d", "relu", "avgpool",
                                                           "flatten", "dense"}));
  // GlobalAveragePool: one 2x2 window over the whole map.
  EXPECT_EQ(report.at("layers")[10].at("output_shape"), (std::vector<int64_t>{16, 1, 1}));
}

TEST(OnnxInspect, ResidualBlockJoinsByAdd) {
  const auto report = inspect_onnx(onnx_model_path("residual.onnx"));
  ASSERT_FALSE(report.empty());
  // Two 3x3 convolutions 4->4 with bias on 8x8, batch 2; dense 4->10.
  EXPECT_EQ(report.at("params"), 2 * (4 * 4 * 9 + 4) + (4 * 10 + 10));
  EXPECT_EQ(report.at("params"), pytorch_params("residual"));
  EXPECT_EQ(report.at("flops"), 2 * (2 * 2 * 4 * 8 * 8 * 4 * 9) + 2 * 2 * 4 * 10);
  const auto& add = report.at("layers")[3];
  EXPECT_EQ(add.at("type"), "add");
  EXPECT_EQ(add.at("inputs"), (std::vector<std::string>{"conv2/Conv", "input"}));
}

TEST(OnnxInspect, TwoInputTowerKeepsBothInputs) {
  const auto report = inspect_onnx(onnx_model_path("two-tower.onnx"));
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report.at("inputs").size(), 2u);
  EXPECT_EQ(report.at("inputs").at("left"), (std::vector<int64_t>{3, 8, 8}));
  // conv 3->6 and 3->10 (3x3 pad 1, bias) on 8x8, batch 2; pools to 4x4; concat 16x4x4; dense 256->10.
  EXPECT_EQ(report.at("params"), (6 * 3 * 9 + 6) + (10 * 3 * 9 + 10) + (256 * 10 + 10));
  EXPECT_EQ(report.at("params"), pytorch_params("two-tower"));
  EXPECT_EQ(report.at("flops"), 2 * (2 * 6 * 8 * 8 * 27 + 2 * 10 * 8 * 8 * 27 + 2 * 256 * 10));
}

/// splitscope counts one bias per gate; PyTorch (and ONNX) keep two, so
/// PyTorch's count is larger by gates·hidden per layer (docs/network-format.md).
TEST(OnnxInspect, LstmAndGruCountOneBiasPerGate) {
  struct Case {
    const char* name;
    int64_t gates;
  };
  for (const Case& c : {Case{"lstm", 4}, Case{"gru", 3}}) {
    const auto report = inspect_onnx(onnx_model_path(std::string(c.name) + ".onnx"));
    ASSERT_FALSE(report.empty());
    const int64_t h = 16, input = 8, steps = 5, batch = 2;
    const int64_t params = (c.gates * h * (input + h) + c.gates * h) + (c.gates * h * (h + h) + c.gates * h) +
                           (h * 4 + 4);
    EXPECT_EQ(report.at("params"), params) << c.name;
    EXPECT_EQ(report.at("params"), pytorch_params(c.name) - 2 * c.gates * h) << c.name;
    const int64_t flops = steps * 2 * c.gates * h * (input + h) * batch + steps * 2 * c.gates * h * (h + h) * batch +
                          2 * h * 4 * batch;
    EXPECT_EQ(report.at("flops"), flops) << c.name;
    // out[:, -1, :] keeps the last step only: the second layer stops returning sequences.
    EXPECT_EQ(report.at("layers")[1].at("output_shape"), (std::vector<int64_t>{h})) << c.name;
    EXPECT_EQ(report.at("layers")[0].at("output_shape"), (std::vector<int64_t>{steps, h})) << c.name;
  }
}

/// The 2-block GPT (export_models.py's Gpt: vocab 50, 8 positions, width 16, 2 causal heads, batch 2), at opset 14
/// (layer norm as ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add) and 17 (LayerNormalization); GELU as Erf at both;
/// and with Q, K and V from three Linears (joined into one linear of 3·width: the same counts).
TEST(OnnxInspect, GptCountsByHandAndMapsEachPatternToOneLayer) {
  for (const std::string model : {"gpt", "gpt-opset17", "gpt-separate-qkv"}) {
    SCOPED_TRACE(model);
    const auto report = inspect_onnx(onnx_model_path(model + ".onnx"));
    ASSERT_FALSE(report.empty());
    const int64_t vocab = 50, t = 8, f = 16, batch = 2;
    const int64_t block_params = 2 * (2 * f) + (f * 3 * f + 3 * f) + (f * f + f) + (f * 4 * f + 4 * f) + (4 * f * f + f);
    const int64_t params = (vocab * f + t * f) + 2 * block_params + 2 * f + f * vocab;  // the head has no bias
    EXPECT_EQ(params, 8320);
    EXPECT_EQ(report.at("params"), params);
    EXPECT_EQ(report.at("params"), pytorch_params(model == "gpt-opset17" ? "gpt" : model));
    // linear 2·T·in·out·B; attention 4·T²·H·B (Q·Kᵀ and P·V over the whole square, causal or not).
    const int64_t block_flops = 2 * t * batch * (f * 3 * f + f * f + f * 4 * f + 4 * f * f) + 4 * t * t * f * batch;
    EXPECT_EQ(report.at("flops"), 2 * block_flops + 2 * t * f * vocab * batch);
    const std::vector<std::string> block{"layer_norm", "linear", "attention", "linear", "add",
                                         "layer_norm", "linear", "gelu",      "linear", "add"};
    std::vector<std::string> expected{"embedding"};
    for (int b = 0; b < 2; ++b) expected.insert(expected.end(), block.begin(), block.end());
    expected.insert(expected.end(), {"layer_norm", "linear"});
    EXPECT_EQ(layer_types(report), expected);
  }
  // The network it maps to is the zoo's gpt-small layout: the same counts at the same batch.
  const auto zoo = inspect_onnx("gpt-small");
  const auto onnx = inspect_onnx(onnx_model_path("gpt.onnx"), "--batch 4");
  EXPECT_EQ(onnx.at("params"), zoo.at("params"));
  EXPECT_EQ(onnx.at("flops"), zoo.at("flops"));
}

TEST(OnnxInspect, GptPatternsAreNamedInTheNetworkAndOnStderr) {
  const CommandResult written = run_splitscope("inspect " + onnx_model_path("gpt.onnx") + " --network-json");
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const auto network = nlohmann::json::parse(written.out);
  const auto& layers = network.at("layers");
  EXPECT_EQ(layers[0].at("type"), "embedding");
  EXPECT_EQ(layers[0].at("vocab"), 50);
  EXPECT_EQ(layers[0].at("positions"), true);  // the Add of the position rows the exporter folded
  EXPECT_EQ(layers[1].at("name"), "blocks.0/ln_1/LayerNorm");
  EXPECT_EQ(layers[1].at("epsilon"), 1e-5);
  EXPECT_EQ(layers[3].at("name"), "blocks.0/attn/Attention");
  EXPECT_EQ(layers[3].at("heads"), 2);
  EXPECT_EQ(layers[3].at("causal"), true);
  EXPECT_EQ(layers[3].at("inputs"), (std::vector<std::string>{"blocks.0/attn/qkv/MatMul"}));
  EXPECT_EQ(layers[8].at("type"), "gelu");
  EXPECT_EQ(layers[22].at("bias"), false);
  // Three Linears for Q, K and V become one linear of 3·16 units, named beside the attention.
  const CommandResult separate = run_splitscope("inspect " + onnx_model_path("gpt-separate-qkv.onnx") + " --network-json");
  ASSERT_EQ(separate.exit_code, 0) << separate.err;
  const auto joined = nlohmann::json::parse(separate.out).at("layers")[2];
  EXPECT_EQ(joined.at("name"), "blocks.0/attn/QKV");
  EXPECT_EQ(joined.at("type"), "linear");
  EXPECT_EQ(joined.at("units"), 48);
  const CommandResult noted = run_splitscope("inspect " + onnx_model_path("gpt-separate-qkv.onnx"));
  EXPECT_NE(noted.err.find("three MatMul (+ Add) projections"), std::string::npos) << noted.err;
  EXPECT_NE(noted.err.find("of 2 heads, causal"), std::string::npos) << noted.err;  // the additive mask
  // Without a mask: attention that is not causal.
  const CommandResult unmasked = run_splitscope("inspect " + onnx_model_path("gpt-unmasked.onnx") + " --network-json");
  ASSERT_EQ(unmasked.exit_code, 0) << unmasked.err;
  EXPECT_EQ(nlohmann::json::parse(unmasked.out).at("layers")[3].at("causal"), false);
  const CommandResult table = run_splitscope("inspect " + onnx_model_path("gpt.onnx"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const std::string words : {"Sqrt, Div, Mul, Add recognised as one layer_norm ('blocks.0/ln_1/LayerNorm')",
                                  "(GELU's erf form) recognised as one gelu ('blocks.1/Gelu')",
                                  "recognised as one attention of 2 heads, causal ('blocks.1/attn/Attention')"}) {
    EXPECT_NE(table.err.find(words), std::string::npos) << words << "\n" << table.err;
  }
}

TEST(OnnxInspect, IdentityAndSizeOneViewsAreNoLayersButDropoutIs) {
  const auto report = inspect_onnx(onnx_model_path("passthrough.onnx"));
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(layer_types(report), (std::vector<std::string>{"flatten", "dropout", "dense"}));
  EXPECT_EQ(report.at("params"), 32 * 5);
  EXPECT_EQ(report.at("flops"), 2 * 3 * 32 * 5);
}

TEST(OnnxInspect, TableAndNetworkJson) {
  const CommandResult table = run_splitscope("inspect " + onnx_model_path("residual.onnx"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("conv1/Conv"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("total"), std::string::npos);
  // --network-json writes a network file that inspect reads back to the same counts.
  const std::string dir = fresh_temp_dir("onnx-network-json");
  const CommandResult written = run_splitscope("inspect " + onnx_model_path("cnn.onnx") + " --batch 2 --network-json");
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const auto network = nlohmann::json::parse(written.out);
  EXPECT_EQ(network.at("batch"), 2);
  EXPECT_EQ(network.at("layers")[0].at("type"), "conv2d");
  {
    std::FILE* file = std::fopen((dir + "/cnn.json").c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(written.out.c_str(), file);
    std::fclose(file);
  }
  const auto from_json = inspect_onnx(dir + "/cnn.json");
  const auto from_onnx = inspect_onnx(onnx_model_path("cnn.onnx"), "--batch 2");
  EXPECT_EQ(from_json.at("params"), from_onnx.at("params"));
  EXPECT_EQ(from_json.at("flops"), from_onnx.at("flops"));
  EXPECT_EQ(from_json.at("layers").size(), from_onnx.at("layers").size());
}

TEST(OnnxInspect, BatchOptionScalesTheFlops) {
  const auto at4 = inspect_onnx(onnx_model_path("mlp.onnx"));
  const auto at16 = inspect_onnx(onnx_model_path("mlp.onnx"), "--batch 16");
  EXPECT_EQ(at16.at("batch"), 16);
  EXPECT_EQ(at16.at("flops").get<int64_t>(), 4 * at4.at("flops").get<int64_t>());
  EXPECT_EQ(at16.at("params"), at4.at("params"));
}

}  // namespace
}  // namespace splitscope::testing
