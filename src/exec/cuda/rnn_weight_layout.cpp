#include "exec/cuda/rnn_weight_layout.hpp"

#include <fmt/format.h>

#include "ir/params.hpp"
#include "util/check.hpp"

namespace splitscope::gpu {

int cudnn_lin_layer_id(int gates, bool recurrent, int gate) {
  SPLITSCOPE_CHECK(gate >= 0 && gate < gates, "gate index out of range");
  return recurrent ? gates + gate : gate;
}

NodeId cell_node_of(const Graph& graph, int layer, int sublayer) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (is_cell(node.kind) && node.layer == layer && node.sublayer == sublayer) return id;
  }
  SPLITSCOPE_CHECK(false, fmt::format("no cell of layer {}, stacked layer {}", layer, sublayer));
  return 0;
}

std::vector<float> cudnn_gate_matrix(const Graph& graph, NodeId cell, bool recurrent, int gate, uint64_t seed) {
  const OpNode& node = graph.node(cell);
  SPLITSCOPE_CHECK(is_cell(node.kind), "not a recurrent cell: " + node.name);
  const auto tensors = param_tensors(graph, cell);
  const int tensor = recurrent ? kRecurrentWeight : kInputWeight;
  const ParamTensor& source = tensors.at(static_cast<size_t>(tensor));
  const ParamElements elements(graph, cell, tensor, seed);
  const int64_t in = source.shape.at(0);
  const int64_t columns = source.shape.at(1);  // G·H
  const int64_t hidden = node.attrs.hidden;
  std::vector<float> matrix(static_cast<size_t>(hidden * in));
  for (int64_t u = 0; u < hidden; ++u) {
    for (int64_t i = 0; i < in; ++i) {
      matrix[static_cast<size_t>(u * in + i)] = elements(i * columns + gate * hidden + u);
    }
  }
  return matrix;
}

std::vector<float> cudnn_gate_bias(const Graph& graph, NodeId cell, int gate, uint64_t seed) {
  const OpNode& node = graph.node(cell);
  const auto tensors = param_tensors(graph, cell);
  SPLITSCOPE_CHECK(tensors.size() > static_cast<size_t>(kCellBias), "cell without bias: " + node.name);
  const ParamElements bias(graph, cell, kCellBias, seed);
  const int64_t hidden = node.attrs.hidden;
  std::vector<float> values(static_cast<size_t>(hidden));
  for (int64_t u = 0; u < hidden; ++u) {
    values[static_cast<size_t>(u)] = bias(gate * hidden + u);
  }
  return values;
}

}  // namespace splitscope::gpu
