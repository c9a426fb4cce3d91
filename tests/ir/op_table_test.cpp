// The op table: every OpKind has exactly one complete definition.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/layer.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/params.hpp"
#include "ir/slice.hpp"

namespace splitscope {
namespace op_table_test {
namespace {

TEST(OpTable, EveryKindHasOneCompleteDefinitionInEnumOrder) {
  ASSERT_EQ(op_defs().size(), kOpKindCount);
  std::set<std::string> names;
  for (size_t i = 0; i < kOpKindCount; ++i) {
    const OpDef& def = op_def(static_cast<OpKind>(i));
    SCOPED_TRACE(std::string(def.name));
    EXPECT_EQ(static_cast<size_t>(def.kind), i);
    EXPECT_FALSE(def.name.empty());
    EXPECT_TRUE(names.insert(std::string(def.name)).second) << "two kinds named " << def.name;
    EXPECT_NE(def.cost, nullptr);
    EXPECT_NE(def.input_channels, nullptr);
    EXPECT_NE(def.signature, nullptr);
    // The simulator's host issue cost asks every kind; no default stands in.
    EXPECT_NE(def.device_calls, nullptr);
    // A weighted kind has weights and splits with its output channels; a kind
    // with weights that are not laid out by hand (dense, conv2d, the cells)
    // says which elements a slice holds (a normalization's gamma and beta).
    if (def.weighted) {
      EXPECT_NE(def.params, nullptr);
      EXPECT_TRUE(def.split.out);
    }
    if (def.params != nullptr && !def.weighted) {
      EXPECT_NE(def.param_range, nullptr);
    }
    if (def.weighted || def.channel_local) {
      EXPECT_TRUE(def.split.out);
    }
    EXPECT_EQ(to_string(def.kind), def.name);
  }
}

TEST(OpTable, EachLayerTypeOfNetworkFilesIsDefinedByTheKindItLowersTo) {
  // The twenty types of docs/network-format.md, each once, in op-table order.
  EXPECT_EQ(layer_type_list(),
            "dense, conv2d, maxpool, avgpool, flatten, softmax, relu, tanh, sigmoid, lstm, gru, add, concat, "
            "batch_norm, layer_norm, dropout, gelu, embedding, attention, linear");
  for (const OpDef* def : op_defs()) {
    if (def->layer == nullptr) continue;
    SCOPED_TRACE(std::string(def->layer->name));
    EXPECT_NE(def->layer->read, nullptr);
    EXPECT_EQ(layer_kind_from_type(def->layer->name), def->kind);
    EXPECT_EQ(layer_type(def->kind), def->layer->name);
    // A layer with weights counts them, and its ops carry them.
    EXPECT_EQ(def->layer->params != nullptr, def->params != nullptr);
    // Every layer type trains: its kind has a backward rule (a final softmax's
    // is the loss's: softmax with cross-entropy, ir/training.cpp).
    if (def->kind != OpKind::kSoftmax) {
      EXPECT_NE(def->gradient, nullptr);
    }
  }
  EXPECT_FALSE(layer_kind_from_type("lstm_cell"));  // the op's name is not the layer's
  EXPECT_EQ(layer_kind_from_type("lstm"), OpKind::kLstmCell);
}

TEST(OpTable, ATableRuleEqualsTheHandCountOfEachKindInAGraph) {
  // dense 6 -> 4 with bias over batch 3: 2·3·6·4 FLOPs, 6·4 + 4 parameters.
  const Graph graph = lower(parse_model_text(R"({"batch": 3, "input": [6], "layers": [
      {"type": "dense", "units": 4, "activation": "relu"}, {"type": "softmax"}]})", "t"));
  const OpNode& dense = graph.node(1);
  const SliceCost cost = op_def(dense.kind).cost(dense, full_slice(dense, {0, 3}));
  EXPECT_EQ(cost.flops, 2 * 3 * 6 * 4);
  EXPECT_EQ(cost.param_count, 6 * 4 + 4);
  EXPECT_EQ(cost.bytes_read, (3 * 6 + 28) * 4);
  EXPECT_EQ(cost.bytes_written, 3 * 4 * 4);
  EXPECT_EQ(op_def(dense.kind).signature(dense, full_slice(dense, {0, 3})), "dense:b3:k6:n4");
  // The activation travels with the op, so no stage reads the layer back.
  EXPECT_EQ(dense.attrs.activation, Activation::kRelu);
  EXPECT_EQ(param_tensors(graph, 1).size(), 2u);
  // softmax reads whole rows whatever columns a slice writes.
  const OpNode& softmax = graph.node(2);
  EXPECT_EQ(op_def(softmax.kind).input_channels(softmax, Slice{{0, 3}, {1, 2}, {0, 4}, {}}, 0), (Range{0, 4}));
}

}  // namespace
}  // namespace op_table_test
}  // namespace splitscope
