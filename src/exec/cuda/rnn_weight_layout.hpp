#pragma once
/// \file
/// params.hpp's recurrent weights in cuDNN's RNN layout, so that the fused
/// cuDNN stack computes exactly what the cell-by-cell plan computes.
///
/// params.hpp keeps, per stacked layer, Wx [in, G·H], Wh [H, G·H] and b [G·H]
/// with gate-major columns g·H + u (LSTM gates i, f, g, o; GRU r, z, n).
/// cuDNN keeps one matrix per gate ("linear layer"): ids 0..G-1 multiply the
/// input and G..2G-1 the hidden state, in the same gate order (LSTM: input,
/// forget, new memory, output; GRU: reset, update, new memory), each
/// row-major [H][in] (cudnnGetRNNWeightParams reports dims {1, H, in}), and
/// with CUDNN_RNN_SINGLE_INP_BIAS one bias [H] per input gate.

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace splitscope::gpu {

/// cuDNN's linLayerID of gate `gate` (params.hpp's order) of the input
/// (`recurrent` false) or recurrent matrices of a cell with `gates` gates.
int cudnn_lin_layer_id(int gates, bool recurrent, int gate);

/// A cell node of stacked layer `sublayer` of recurrent layer `layer`
/// (its weights are those of every step of that stacked layer).
NodeId cell_node_of(const Graph& graph, int layer, int sublayer);

/// The cuDNN matrix of one gate: [H][in] row-major, element (u, i) =
/// Wx[i][gate·H + u] (or Wh for `recurrent`), from the weights of `cell`.
std::vector<float> cudnn_gate_matrix(const Graph& graph, NodeId cell, bool recurrent, int gate, uint64_t seed);

/// The input bias of one gate: [H], element u = b[gate·H + u].
std::vector<float> cudnn_gate_bias(const Graph& graph, NodeId cell, int gate, uint64_t seed);

}  // namespace splitscope::gpu
