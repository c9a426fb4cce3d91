// End to end: the built `splitscope inspect` and its exit codes.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace inspect_test {
namespace {

TEST(InspectCommand, JsonOfTheSmallMlpHasHandComputedTotals) {
  const CommandResult result = run_splitscope("inspect mlp-small --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto doc = nlohmann::json::parse(result.out);
  EXPECT_EQ(doc["name"], "mlp-small");
  ASSERT_TRUE(doc["layers"].is_array());
  int64_t flops = 0;
  int64_t params = 0;
  for (const auto& layer : doc["layers"]) {
    for (const char* field : {"name", "type", "output_shape", "params", "flops"}) {
      EXPECT_TRUE(layer.contains(field)) << field;
    }
    flops += layer["flops"].get<int64_t>();
    params += layer["params"].get<int64_t>();
  }
  EXPECT_EQ(doc["flops"].get<int64_t>(), flops);
  EXPECT_EQ(doc["params"].get<int64_t>(), params);
  // mlp-small: batch 8, 64 -> 4 x dense 64 -> dense 10 -> softmax.
  // params 4·(64·64 + 64) + 64·10 + 10 = 16640 + 650 = 17290;
  // FLOPs 2·8·(4·64·64 + 64·10) = 16·17024 = 272384.
  EXPECT_EQ(doc["params"].get<int64_t>(), 17290);
  EXPECT_EQ(doc["flops"].get<int64_t>(), 272384);
}

TEST(InspectCommand, Gpt2SmallHasHandComputedTotals) {
  const CommandResult result = run_splitscope("inspect gpt2-small --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto doc = nlohmann::json::parse(result.out);
  // GPT-2's 124,439,808 parameters (wte 50,257·768, wpe 1,024·768, 12 blocks
  // of 7,087,872, ln_f 2·768) and its LM head untied: 50,257·768 more.
  EXPECT_EQ(doc["params"].get<int64_t>(), 124'439'808 + 50'257 * 768);
  // Per sample and block: 2·T·12·H² in the four linear layers and 4·T²·H in
  // attention (T 1,024, H 768); the head 2·T·H·50,257; batch 8.
  const int64_t t = 1'024;
  const int64_t h = 768;
  const int64_t per_sample = 12 * (2 * t * 12 * h * h + 4 * t * t * h) + 2 * t * h * 50'257;
  EXPECT_EQ(doc["flops"].get<int64_t>(), 8 * per_sample);
  const CommandResult text = run_splitscope("inspect gpt2-small");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("attention"), std::string::npos);
}

TEST(InspectCommand, EveryZooNetworkInspects) {
  for (const char* name : {"mlp", "cnn", "lstm", "gru", "mlp-small", "cnn-small", "lstm-small",
                           "gru-small", "gpt2-small", "gpt-1.3b", "bert-base", "gpt-small", "bert-small"}) {
    const CommandResult result = run_splitscope(std::string("inspect ") + name);
    EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err;
    EXPECT_NE(result.out.find("total"), std::string::npos) << name;
  }
}

TEST(InspectCommand, BadFileIsExitTwoWithFileAndField) {
  const std::string dir = fresh_temp_dir("inspect-bad");
  const std::string path = dir + "/bad.json";
  std::ofstream(path) << R"({"batch": 2, "input": [3, 8, 8], "layers": [{"type": "dense", "units": 4}]})";
  const CommandResult result = run_splitscope("inspect " + path);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("error: " + path + ": layers[0]: dense needs a flat input"), std::string::npos)
      << result.err;
  EXPECT_TRUE(result.out.empty());
}

TEST(InspectCommand, UnknownNameListsTheZoo) {
  const CommandResult result = run_splitscope("inspect no-such-net");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("known networks:"), std::string::npos) << result.err;
}

TEST(InspectCommand, BadOptionIsExitTwo) {
  const CommandResult result = run_splitscope("inspect mlp-small --no-such-option");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("error: command line:"), std::string::npos) << result.err;
}

TEST(InspectCommand, VersionAndHelp) {
  EXPECT_EQ(run_splitscope("--version").exit_code, 0);
  const CommandResult help = run_splitscope("inspect --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("MODEL"), std::string::npos);
}

}  // namespace
}  // namespace inspect_test
}  // namespace splitscope::testing
