// The zoo: every network in models/networks parses and lowers; names resolve.

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

TEST(Zoo, HasTheNetworksTheIssueAsksFor) {
  const auto names = zoo_names(ZooShelf::kNetworks);
  for (const char* name : {"mlp", "cnn", "lstm", "gru", "mlp-small", "cnn-small", "lstm-small",
                           "gru-small"}) {
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

TEST(Zoo, CnnHasGroupedMiddleConvolutions) {
  const Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "cnn"));
  int grouped = 0;
  for (const Layer& layer : model.layers) grouped += layer.kind == LayerKind::kConv2d && layer.groups == 2;
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
}  // namespace splitscope
