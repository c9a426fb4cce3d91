// The zoo: every network in models/networks parses and lowers; names resolve.

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace zoo_test {
namespace {

TEST(Zoo, HasTheNetworksTheIssueAsksFor) {
  const auto names = zoo_names(ZooShelf::kNetworks);
  for (const char* name : {"mlp", "cnn", "lstm", "gru", "mlp-small", "cnn-small", "lstm-small", "gru-small",
                           "resnet50", "resnet-small", "two-tower", "two-tower-small", "inception",
                           "inception-small", "gpt2-small", "gpt-1.3b", "bert-base", "gpt-small", "bert-small"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(Zoo, EveryNetworkParsesAndLowersAcyclic) {
  for (const auto& name : zoo_names(ZooShelf::kNetworks)) {
    SCOPED_TRACE(name);
    const Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name));
    const Graph graph = lower(model);
    EXPECT_TRUE(graph.is_acyclic());
    EXPECT_GT(graph.total_flops(), 0);
  }
}

/// The zoo network `name`, lowered.
Graph zoo(const std::string& name) { return lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))); }

const Layer& layer_named(const Model& model, const std::string& name) {
  return *std::find_if(model.layers.begin(), model.layers.end(), [&](const Layer& l) { return l.name == name; });
}

TEST(Zoo, Resnet50HasTorchvisionsWeightsAndBatchNorms) {
  // torchvision's resnet50 has 25,557,032 parameters: conv weights without
  // bias, two per channel in its 53 batch norms (26,560 channels: stem 64,
  // then per stage blocks x (mid + mid + out) + out for the projection:
  // 1,408 + 3,584 + 10,240 + 11,264), and the fc layer.
  const Graph graph = zoo("resnet50");
  EXPECT_EQ(graph.total_params(), 25'557'032);
  int norms = 0;
  int64_t norm_params = 0;
  for (const Layer& layer : graph.model().layers) {
    if (layer.kind != OpKind::kBatchNorm) continue;
    ++norms;
    norm_params += layer_params(layer);
  }
  EXPECT_EQ(norms, 53);
  EXPECT_EQ(norm_params, 2 * 26'560);
  const Model& model = graph.model();
  EXPECT_EQ(layer_named(model, "res5c_out").output_shape, (Shape{2048, 7, 7}));
}

TEST(Zoo, Resnet50FoldedHasTorchvisionsWeightsWithBatchNormFoldedIntoBiases) {
  // Folding each norm into a conv bias keeps one per channel: 25,557,032 - 26,560.
  const Graph graph = zoo("resnet50-folded");
  EXPECT_EQ(graph.total_params(), 25'557'032 - 26'560);
  const Model& model = graph.model();
  EXPECT_EQ(layer_named(model, "pool1").output_shape, (Shape{64, 56, 56}));
  EXPECT_EQ(layer_named(model, "res2c_out").output_shape, (Shape{256, 56, 56}));
  EXPECT_EQ(layer_named(model, "res3a_out").output_shape, (Shape{512, 28, 28}));
  EXPECT_EQ(layer_named(model, "res4f_out").output_shape, (Shape{1024, 14, 14}));
  EXPECT_EQ(layer_named(model, "res5c_out").output_shape, (Shape{2048, 7, 7}));
}

TEST(Zoo, InceptionHasGoogLeNetsBlockWidths) {
  // Table 1 of Szegedy et al. (2015): each block's output depth and size.
  const Graph graph = zoo("inception");
  const Model& model = graph.model();
  const std::vector<std::pair<std::string, Shape>> blocks{
      {"inception3a_out", {256, 28, 28}}, {"inception3b_out", {480, 28, 28}}, {"inception4a_out", {512, 14, 14}},
      {"inception4b_out", {512, 14, 14}}, {"inception4c_out", {512, 14, 14}}, {"inception4d_out", {528, 14, 14}},
      {"inception4e_out", {832, 14, 14}}, {"inception5a_out", {832, 7, 7}},  {"inception5b_out", {1024, 7, 7}}};
  for (const auto& [name, shape] : blocks) EXPECT_EQ(layer_named(model, name).output_shape, shape) << name;
}

TEST(Zoo, CnnHasGroupedMiddleConvolutions) {
  const Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "cnn"));
  int grouped = 0;
  for (const Layer& layer : model.layers) grouped += layer.kind == OpKind::kConv2d && layer.attrs.groups == 2;
  EXPECT_GE(grouped, 2);
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    resolve_zoo_file(ZooShelf::kNetworks, "resnet9000");
    FAIL();
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("known networks:"), std::string::npos) << message;
    EXPECT_NE(message.find("mlp"), std::string::npos) << message;
  }
}

TEST(Zoo, AMissingPathIsNotLookedUpInTheZoo) {
  try {
    resolve_zoo_file(ZooShelf::kNetworks, "some/dir/mlp.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("no such file"), std::string::npos);
  }
}

}  // namespace
}  // namespace zoo_test
}  // namespace splitscope
