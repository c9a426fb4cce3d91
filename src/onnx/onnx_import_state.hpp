#pragma once
/// \file
/// What the importer knows while it walks the graph's nodes in order: the
/// network built so far, which ONNX tensor is which layer's output (a value),
/// which tensors are known constants, and the shapes ONNX inference found.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_constants.hpp"
#include "onnx/onnx_network_builder.hpp"

namespace splitscope {

/// An ONNX tensor computed from the graph's inputs: the layer (or network
/// input) that holds it in splitscope, and its ONNX dims. A view (Reshape,
/// Squeeze, Transpose, ...) makes a new value of the same layer with other
/// dims when the elements of each sample stay in the same order.
struct OnnxValue {
  std::string layer;
  std::vector<int64_t> dims;  ///< batch included
  size_t batch_axis = 0;
  bool sequence = false;  ///< every step of a recurrent layer (ONNX's Y), before a last step is taken
};

/// Where a weighted layer's tensors are in the file (initializers or Constant
/// nodes, by name; "" where the node has none) and how they become
/// params.hpp's layout (onnx_weights.hpp).
struct OnnxLayerWeights {
  enum class Form {
    kDense,            ///< [W [in, units], bias]: MatMul (+ Add), on vectors (dense) or sequences (linear)
    kDenseTransposed,  ///< [B [units, in], C]: Gemm with transB = 1
    kConv,             ///< [W, B]: the same layout
    kBatchNorm,        ///< [scale, B, mean, var]
    kLayerNorm,        ///< [Scale, B]; "" for either: ones or zeros (`hidden` features)
    kEmbedding,        ///< [W [vocab, features], P [positions, features] or ""]: Gather (+ Add)
    kJoinedProjections,  ///< [Wq, Wk, Wv (each [in, width]), bq, bk, bv or "" each]: one linear of 3·width
    kLstm,             ///< [W, R, B]: gates i, o, f, c
    kGru,              ///< [W, R, B]: gates z, r, h, linear_before_reset
  };
  Form form = Form::kDense;
  std::vector<std::string> tensors;
  double epsilon = 0;  ///< normalizations
  int64_t hidden = 0;  ///< cells; a layer norm's features
};

struct OnnxImportState {
  std::string path;
  int64_t batch = 0;  ///< the batch shape inference ran with
  int64_t opset = 0;
  OnnxNetworkBuilder network;
  std::map<std::string, OnnxValue> values;
  std::map<std::string, OnnxConstant> constants;
  std::map<std::string, std::vector<int64_t>> inferred;  ///< -1 where inference left a size open
  std::map<std::string, int> consumers;  ///< node inputs and graph outputs reading each tensor
  std::map<std::string, std::string> bias_pending;  ///< a MatMul's output -> its dense layer, for an Add's bias
  std::map<std::string, std::string> positions_pending;  ///< an embedding's output -> its layer, for an Add of positions
  std::set<std::string> last_step_taken;  ///< recurrent layers now giving their last step only
  std::map<std::string, OnnxLayerWeights> weights;  ///< weighted layer -> where its tensors are
};

}  // namespace splitscope
