// embedding, linear, attention and gelu as layers and ops: their shapes and
// refusals in the network format, their FLOPs, bytes and parameters by their
// definitions, and the transformer zoo's totals, against counts done by hand.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace transformer_layers_test {
namespace {

std::string transformer_net(const std::string& input, const std::string& layers) {
  return R"({"batch": 2, "input": )" + input + R"(, "layers": [)" + layers + "]}";
}

void expect_transformer_error(const std::string& text, const std::string& field, const std::string& words) {
  try {
    parse_model_text(text, "nets/bad.json");
    FAIL() << "no error for " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos) << error.what() << "\nexpected: " << words;
  }
}

const OpNode& first_of(const Graph& graph, OpKind kind) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).kind == kind) return graph.node(id);
  }
  throw std::logic_error("no such op");
}

// ids [5] -> embedding [5, 6] (+ positions) -> linear [5, 12] -> attention [5, 4] -> gelu -> linear [5, 3].
const char* kBlock = R"(
    {"type": "embedding", "vocab": 7, "features": 6, "positions": true},
    {"type": "linear", "units": 12}, {"type": "attention", "heads": 2, "causal": true},
    {"type": "gelu"}, {"type": "linear", "units": 3, "bias": false})";

TEST(TransformerLayers, ShapesAndParametersFollowTheLayers) {
  const Model model = parse_model_text(transformer_net("[5]", kBlock), "ok.json");
  EXPECT_EQ(model.layers[0].output_shape, (Shape{5, 6}));
  EXPECT_EQ(model.layers[1].output_shape, (Shape{5, 12}));
  EXPECT_EQ(model.layers[2].output_shape, (Shape{5, 4}));
  EXPECT_EQ(model.layers[3].output_shape, (Shape{5, 4}));
  EXPECT_EQ(model.layers[4].output_shape, (Shape{5, 3}));
  EXPECT_EQ(layer_params(model.layers[0]), 7 * 6 + 5 * 6);  // token table and position table
  EXPECT_EQ(layer_params(model.layers[1]), 6 * 12 + 12);
  EXPECT_EQ(layer_params(model.layers[2]), 0);
  EXPECT_EQ(layer_params(model.layers[4]), 4 * 3);
  // linear: 2 FLOPs per multiply-add, at each of 5 positions of 2 samples.
  EXPECT_EQ(layer_flops(model.layers[1], 2), 2 * 5 * 6 * 12 * 2);
  // attention: Q·Kᵀ and P·V, each 2·T·T·d per head: 2 heads × 2 × (2·5·5·2) = 4·T²·H = 400 a sample.
  EXPECT_EQ(layer_flops(model.layers[2], 2), 400 * 2);
  EXPECT_EQ(layer_flops(model.layers[3], 2), 0);
}

TEST(TransformerLayers, BadPlacementsAreRefusedNamingTheLayer) {
  expect_transformer_error(transformer_net("[4, 6]", R"({"type": "embedding", "vocab": 3, "features": 2})"),
                           "layers[0]", "embedding reads a sequence of token ids [positions], but gets [4, 6]");
  expect_transformer_error(transformer_net("[4]", R"({"type": "embedding", "features": 2})"), "layers[0].vocab", "");
  expect_transformer_error(transformer_net("[4, 10]", R"({"type": "attention", "heads": 2})"), "layers[0]",
                           "attention reads a sequence [positions, 3·features]");
  expect_transformer_error(transformer_net("[4, 12]", R"({"type": "attention", "heads": 3})"), "layers[0].heads",
                           "the 4 features are not divisible by heads = 3");
  expect_transformer_error(transformer_net("[4]", R"({"type": "linear", "units": 3})"), "layers[0]",
                           "linear applies a dense layer at each position of a sequence [positions, features], but "
                           "gets [4]; use dense");
  expect_transformer_error(transformer_net("[4, 6]", R"({"type": "gelu", "approximate": "tanh"})"),
                           "layers[0].approximate", "unknown field");
}

TEST(TransformerLayers, OpCostsAreTheHandCountedOnes) {
  const Graph graph = lower(parse_model_text(transformer_net("[5]", kBlock), "ok.json"));
  const Slice one{{1, 2}, {0, 5}, {0, 5}, {}};
  {
    const OpNode& node = first_of(graph, OpKind::kEmbedding);
    const SliceCost c = op_def(node.kind).cost(node, one);
    EXPECT_EQ(c.flops, 0);
    EXPECT_EQ(c.param_count, 72);
    EXPECT_EQ(c.bytes_written, 5 * 6 * 4);
    EXPECT_EQ(c.bytes_read, 5 * 4 + 5 * 6 * 4 + 5 * 6 * 4);  // ids, picked rows, the position table
    EXPECT_EQ(op_def(node.kind).signature(node, one), "embedding:b1:t5:v7:f6:pos");
    EXPECT_EQ(node.bytes_read, 2 * (5 * 4 + 5 * 6 * 4) + 5 * 6 * 4);  // lowering counts the same for the batch
  }
  {
    const OpNode& node = first_of(graph, OpKind::kAttention);
    const SliceCost c = op_def(node.kind).cost(node, one);
    EXPECT_EQ(c.flops, 400);
    EXPECT_EQ(c.bytes_read, 5 * 12 * 4);
    EXPECT_EQ(c.bytes_written, 5 * 4 * 4);
    const GemmDims g = op_def(node.kind).gemm(node, one);
    EXPECT_EQ(2 * g.m * g.n * g.k * g.count, c.flops);  // 2 heads × 2 products of 5×5×2
    EXPECT_EQ(op_def(node.kind).signature(node, one), "attention:b1:t5:h2:d2:causal");
    EXPECT_EQ(node.flops, 800);
  }
  {
    const OpNode& node = first_of(graph, OpKind::kLinear);
    const SliceCost c = op_def(node.kind).cost(node, one);
    EXPECT_EQ(c.flops, 2 * 5 * 6 * 12);
    EXPECT_EQ(c.param_count, 84);
    EXPECT_EQ(c.bytes_read, (5 * 6 + 84) * 4);
    const GemmDims g = op_def(node.kind).gemm(node, one);
    EXPECT_EQ(2 * g.m * g.n * g.k * g.count, c.flops);
    EXPECT_EQ(node.flops, 2 * c.flops);
  }
  {
    const OpNode& node = first_of(graph, OpKind::kGelu);
    const SliceCost c = op_def(node.kind).cost(node, Slice{{0, 2}, {1, 3}, {0, 5}, {}});  // positions 1, 2
    EXPECT_EQ(c.flops, 0);
    EXPECT_EQ(c.bytes_written, 2 * 2 * 4 * 4);
    EXPECT_EQ(c.bytes_read, c.bytes_written);
  }
}

TEST(TransformerLayers, BackwardKindsCostTheirProducts) {
  const Graph forward = lower(parse_model_text(transformer_net("[5]", kBlock), "ok.json"));
  Optimizer sgd;
  const Graph training = training_graph(forward, sgd);
  const Slice both{{0, 2}, {0, 5}, {0, 5}, {}};
  int seen = 0;
  for (NodeId id = 0; id < training.num_nodes(); ++id) {
    const OpNode& node = training.node(id);
    const SliceCost c = op_def(node.kind).cost(node, full_slice(node, {0, 2}));
    if (node.kind == OpKind::kAttentionGrad) {
      // Recompute S, then dV, dP, dQ, dK: five products of 5×5×2 per head, 2.5 times the forward's 400.
      EXPECT_EQ(c.flops, 2 * 1000);
      EXPECT_EQ(node.output_shapes.at(0), (Shape{5, 12}));
      ++seen;
    }
    if (node.kind == OpKind::kLinearGradWeight && node.input_shapes.at(0) == Shape{5, 6}) {
      EXPECT_EQ(c.flops, 2 * 2 * 5 * 6 * 12 + 2 * 5 * 12);  // Xᵀ·dY over 10 positions, and the bias's sum
      EXPECT_EQ(c.bytes_written, 84 * 4);
      ++seen;
    }
    if (node.kind == OpKind::kEmbeddingGradWeight) {
      EXPECT_EQ(c.bytes_written, 72 * 4);  // both tables' gradients
      EXPECT_EQ(node.param_key, first_of(forward, OpKind::kEmbedding).param_key);
      ++seen;
    }
    if (node.kind == OpKind::kGeluGrad) {
      EXPECT_EQ(c.bytes_read, 2 * c.bytes_written);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 4);
  (void)both;
}

/// Forward FLOPs of one sample of a GPT of these sizes, by hand: per block the
/// four linear layers (3H², H², 4H², 4H² multiply-adds a position) and
/// attention's two T×T×H products; then the LM head.
int64_t gpt_flops_per_sample(int64_t vocab, int64_t positions, int64_t hidden, int64_t blocks) {
  const int64_t linear = 2 * positions * (3 + 1 + 4 + 4) * hidden * hidden;
  const int64_t attention = 2 * 2 * positions * positions * hidden;
  return blocks * (linear + attention) + 2 * positions * hidden * vocab;
}

TEST(TransformerLayers, Gpt2SmallHasGpt2sParametersPlusItsUntiedHead) {
  const Graph graph = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "gpt2-small")));
  // GPT-2 small: 124,439,808 parameters with the LM head tied to the token
  // table (wte 50,257×768, wpe 1,024×768, 12 blocks of 7,087,872, ln_f 1,536).
  // splitscope does not tie weights, so the head's 50,257×768 count again.
  const int64_t block = 2 * 768 + (768 * 2304 + 2304) + (768 * 768 + 768) + 2 * 768 + (768 * 3072 + 3072) +
                        (3072 * 768 + 768);
  EXPECT_EQ(block, 7'087'872);
  EXPECT_EQ(50'257 * 768 + 1'024 * 768 + 12 * block + 2 * 768, 124'439'808);
  EXPECT_EQ(graph.total_params(), 124'439'808 + 50'257 * 768);
  EXPECT_EQ(graph.batch(), 8);
  EXPECT_EQ(gpt_flops_per_sample(50'257, 1'024, 768, 12), 291'648'307'200);
  EXPECT_EQ(graph.total_flops(), 8 * 291'648'307'200);
}

TEST(TransformerLayers, Gpt13bHasMegatronsShape) {
  const Graph graph = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "gpt-1.3b")));
  const int64_t h = 2048;
  const int64_t block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h);
  EXPECT_EQ(graph.total_params(), 50'257 * h + 1'024 * h + 24 * block + 2 * h + 50'257 * h);
  EXPECT_EQ(graph.total_params(), 1'416'552'448);
  EXPECT_EQ(graph.total_flops(), 8 * gpt_flops_per_sample(50'257, 1'024, h, 24));
}

TEST(TransformerLayers, BertBaseHasBertsEncoder) {
  const Graph graph = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "bert-base")));
  // BERT-base's 109,482,240 less token types (2×768) and the pooler (768×768 + 768), plus an untied output linear.
  EXPECT_EQ(graph.total_params(), 109'482'240 - 2 * 768 - (768 * 768 + 768) + (768 * 30'522 + 30'522));
  const int64_t t = 512;
  const int64_t h = 768;
  const int64_t per_sample = 12 * (2 * t * 12 * h * h + 4 * t * t * h) + 2 * t * h * 30'522;
  EXPECT_EQ(graph.total_flops(), 8 * per_sample);
}

}  // namespace
}  // namespace transformer_layers_test
}  // namespace splitscope
