// params.hpp's recurrent weights in cuDNN's layout, element by element.

#include <gtest/gtest.h>

#include "exec/cuda/rnn_weight_layout.hpp"
#include "ir/params.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace rnn_weight_layout_test {
namespace {

using gpu::cudnn_gate_bias;
using gpu::cudnn_gate_matrix;
using gpu::cudnn_lin_layer_id;

TEST(RnnWeightLayout, LinearLayerIdsFollowCudnnsGateOrder) {
  // LSTM: ids 0-3 input matrices of gates i, f, g, o; 4-7 the recurrent ones.
  EXPECT_EQ(cudnn_lin_layer_id(4, false, 0), 0);
  EXPECT_EQ(cudnn_lin_layer_id(4, false, 3), 3);
  EXPECT_EQ(cudnn_lin_layer_id(4, true, 0), 4);
  EXPECT_EQ(cudnn_lin_layer_id(4, true, 3), 7);
  // GRU: 0-2 input (r, z, n), 3-5 recurrent.
  EXPECT_EQ(cudnn_lin_layer_id(3, false, 2), 2);
  EXPECT_EQ(cudnn_lin_layer_id(3, true, 0), 3);
  EXPECT_EQ(cudnn_lin_layer_id(3, true, 2), 5);
  EXPECT_THROW(cudnn_lin_layer_id(3, false, 3), std::logic_error);
}

TEST(RnnWeightLayout, GateMatricesAreTheTransposedGateColumns) {
  // 2 stacked LSTM layers, input 5, hidden 3: Wx of layer 0 is [5][12], of layer 1 [3][12].
  const auto graph = graph_from_text(R"({"batch": 1, "input": [2, 5], "layers": [
      {"type": "lstm", "hidden": 3, "layers": 2}]})");
  for (int sublayer = 0; sublayer < 2; ++sublayer) {
    const NodeId cell = gpu::cell_node_of(*graph, 0, sublayer);
    EXPECT_EQ(graph->node(cell).sublayer, sublayer);
    const auto tensors = param_tensors(*graph, cell);
    const int key = graph->node(cell).param_key;
    const int64_t in = sublayer == 0 ? 5 : 3;
    for (bool recurrent : {false, true}) {
      const int tensor = recurrent ? kRecurrentWeight : kInputWeight;
      const int64_t rows = recurrent ? 3 : in;
      for (int gate = 0; gate < 4; ++gate) {
        const auto matrix = cudnn_gate_matrix(*graph, cell, recurrent, gate, 21);
        ASSERT_EQ(matrix.size(), static_cast<size_t>(3 * rows));
        for (int64_t u = 0; u < 3; ++u) {
          for (int64_t i = 0; i < rows; ++i) {
            // cuDNN's [u][i] is params.hpp's W[i][gate·H + u].
            EXPECT_EQ(matrix[static_cast<size_t>(u * rows + i)],
                      param_value(21, key, tensor, i * 12 + gate * 3 + u, tensors[static_cast<size_t>(tensor)].scale));
          }
        }
      }
    }
    for (int gate = 0; gate < 4; ++gate) {
      const auto bias = cudnn_gate_bias(*graph, cell, gate, 21);
      ASSERT_EQ(bias.size(), 3u);
      for (int64_t u = 0; u < 3; ++u) {
        EXPECT_EQ(bias[static_cast<size_t>(u)], param_value(21, key, kCellBias, gate * 3 + u, tensors[kCellBias].scale));
      }
    }
  }
}

TEST(RnnWeightLayout, GruUsesItsThreeGates) {
  const auto graph = graph_from_text(R"({"batch": 1, "input": [2, 4], "layers": [
      {"type": "gru", "hidden": 2}]})");
  const NodeId cell = gpu::cell_node_of(*graph, 0, 0);
  const auto tensors = param_tensors(*graph, cell);
  const auto n_gate = cudnn_gate_matrix(*graph, cell, false, 2, 8);
  ASSERT_EQ(n_gate.size(), 2u * 4u);
  // Element (u = 1, i = 3) is Wx[3][2·2 + 1] of the [4][6] tensor: index 3·6 + 5 = 23.
  EXPECT_EQ(n_gate[1 * 4 + 3], param_value(8, graph->node(cell).param_key, kInputWeight, 23, tensors[0].scale));
}

}  // namespace
}  // namespace rnn_weight_layout_test
}  // namespace splitscope::testing
