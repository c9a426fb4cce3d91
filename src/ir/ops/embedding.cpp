// embedding: token ids [T] (whole numbers held as floats, in [0, vocab)) ->
// rows of a table W [vocab, F]: [T, F]. A gather, no FLOPs: reads the ids and
// the T rows it picks, writes them. Sliced by samples only (a slice of
// positions or of the table's columns is possible, but no partitioner needs
// it yet): every slice holds the whole table. Its gradient is a scatter-add of
// dY's rows into the table (embedding_grad_weight); the ids have none.
// With `positions`, a learned table P [T, F] is added: y[t] = W[id(t)] + P[t].
#include <cmath>
#include <fmt/format.h>

#include "ir/gradient_builder.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace embedding_op {

using op_rules::kFloat;

int64_t table_rows(const OpNode& node) { return node.attrs.vocab; }
int64_t table_width(const OpNode& node) { return node.output_shapes.at(0).back(); }
int64_t positions(const OpNode& node) { return node.output_shapes.at(0).at(0); }

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.param_count = (table_rows(node) + (node.attrs.positions ? positions(node) : 0)) * table_width(node);
  c.bytes_written = op_rules::output_bytes(node, slice);
  // The ids, and the rows they pick (not the whole table); the position table once.
  c.bytes_read = slice.batch.size() * element_count(node.input_shapes.at(0)) * kFloat + c.bytes_written +
                 (node.attrs.positions ? positions(node) * table_width(node) * kFloat : 0);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("embedding:b{}:t{}:v{}:f{}{}", slice.batch.size(), positions(node), table_rows(node),
                     table_width(node), node.attrs.positions ? ":pos" : "");
}

/// W [vocab, F] (uniform in [-1, 1), the spread of PyTorch's N(0, 1) nn.Embedding),
/// and P [T, F] for the positions where it has them.
std::vector<ParamTensor> params(const OpNode& node) {
  std::vector<ParamTensor> tensors{ParamTensor{"W", {table_rows(node), table_width(node)}, 1.0f, 0.0f}};
  if (node.attrs.positions) tensors.push_back(ParamTensor{"P", {positions(node), table_width(node)}, 1.0f, 0.0f});
  return tensors;
}

/// Every slice holds both tables whole.
Range whole_table(const OpNode& node, const Slice&, int tensor) {
  return {0, (tensor == 0 ? table_rows(node) : positions(node)) * table_width(node)};
}

void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  builder.add(OpKind::kEmbeddingGradWeight, node, "grad_weight", {builder.input(node, 0), *gradients.at(0)},
              forward.output_shapes.at(0), forward.attrs);
}

}  // namespace embedding_op

namespace embedding_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.attrs.vocab = fields.required_positive("vocab", "the number of token ids (rows of the table)");
  layer.features = fields.required_positive("features", "the width of each token's vector");
  layer.attrs.positions = fields.optional_bool("positions", false);
  if (layer.input_shape.size() != 1) {
    fields.fail("", "embedding reads a sequence of token ids [positions], but gets " + to_string(layer.input_shape) +
                        "; give the network \"input\": [positions]");
  }
  layer.output_shape = {layer.input_shape[0], layer.features};
}

/// The token table, and the position table if it has one.
int64_t params(const Layer& layer) {
  const OpAttrs& a = layer.attrs;
  return count_product({count_sum(a.vocab, a.positions ? layer.input_shape.at(0) : 0), layer.features});
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "embedding";
    d.fields = {"vocab", "features", "positions"};
    d.read = read;
    d.params = params;
    return d;
  }();
  return def;
}

}  // namespace embedding_layer

const OpDef& embedding_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kEmbedding;
    d.name = "embedding";
    d.cost = embedding_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = embedding_op::signature;
    d.params = embedding_op::params;
    d.gradient = embedding_op::gradient;
    d.param_range = embedding_op::whole_table;
    d.device_calls = op_rules::one_device_call;
    d.layer = &embedding_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
