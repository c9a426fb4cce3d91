#pragma once
/// \file
/// The weight layout every backend agrees on, and the deterministic values in
/// it. Weights are a pure function of (seed, weight set, tensor, element), so a
/// shard on any device materialises exactly its slice of the same function,
/// and every strategy and backend computes the same network.
///
/// Layouts (row-major):
///   dense   W [in, units]                 b [units]
///   conv2d  W [filters, in/groups, kh, kw] b [filters]
///   lstm    Wx [in, 4H]  Wh [H, 4H]  b [4H]   gate-major columns g·H + u, gates i, f, g, o
///   gru     Wx [in, 3H]  Wh [H, 3H]  b [3H]   gates r, z, n; n = tanh(x·Wx_n + b_n + r ⊙ (h·Wh_n))
/// (the GRU form with the reset gate applied after the recurrent product, as in
/// cuDNN and PyTorch, with the single input bias of docs/network-format.md's parameter count).

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/ops/op_def.hpp"

namespace splitscope {

/// The weight tensors of a weighted node (empty for the others), in index
/// order: its op definition's layout.
std::vector<ParamTensor> param_tensors(const Graph& graph, NodeId node);

/// Index of each tensor within param_tensors().
inline constexpr int kWeight = 0;     ///< dense, conv2d
inline constexpr int kBias = 1;       ///< dense, conv2d
inline constexpr int kInputWeight = 0;      ///< cells: Wx
inline constexpr int kRecurrentWeight = 1;  ///< cells: Wh
inline constexpr int kCellBias = 2;         ///< cells: b

/// Whether a slice of a dense layer (or of its weight gradient) over
/// reduction rows `reduce` carries the bias: a row-split product adds it
/// once, in the slice that starts the reduction, so only that slice holds
/// its weights' bias tensor, computes its gradient and updates it. Every
/// backend and the simulator's call counts follow this one rule.
inline bool slice_carries_bias(const OpNode& node, Range reduce) { return node.attrs.bias && reduce.begin == 0; }

/// Element `element` of tensor `tensor` of weight set `param_key`.
float param_value(uint64_t seed, int param_key, int tensor, int64_t element, float scale);

/// The elements of tensor `tensor` of node `node`'s weight set, as every
/// backend materialises them: the network's own (Model::weights, an ONNX
/// file's) where it brings them, else param_value()'s, offset by the
/// tensor's ParamTensor::offset. Built once per tensor, read per element.
class ParamElements {
 public:
  ParamElements(const Graph& graph, NodeId node, int tensor, uint64_t seed);
  float operator()(int64_t element) const {
    return loaded_ != nullptr ? (*loaded_)[static_cast<size_t>(element)]
                              : offset_ + param_value(seed_, key_, tensor_, element, scale_);
  }
  /// The network's own tensor, or null.
  const std::vector<float>* loaded() const { return loaded_; }

 private:
  const std::vector<float>* loaded_ = nullptr;
  uint64_t seed_ = 0;
  int key_ = -1;
  int tensor_ = 0;
  float scale_ = 0;
  float offset_ = 0;
};

/// Element `element` of network input `input` (Model::inputs), laid out
/// [batch, ...its shape]; uniform in [-1, 1). Each input draws its own stream.
float input_value(uint64_t seed, int64_t element, int input = 0);

/// Element `element` of a network input that holds token ids (an embedding
/// reads it: its node's attrs.vocab > 0): input_value()'s draw mapped to a
/// whole number in [0, vocab), as a float. vocab 0: input_value() itself.
float network_input_value(uint64_t seed, int64_t element, int input, int64_t vocab);

/// Element `element` of the loss's target input [batch, ...] (a training
/// graph's attrs.target node): for cross-entropy a label in [0, classes)
/// (as a float), for mean squared error a target in [-1, 1). Its own stream,
/// apart from every network input's.
float target_value(uint64_t seed, int64_t element, LossKind loss, int64_t classes);

}  // namespace splitscope
