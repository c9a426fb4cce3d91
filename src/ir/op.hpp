#pragma once
/// \file
/// One node of the Graph: an op instance with its shapes and costs.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_attrs.hpp"
#include "ir/shape.hpp"

namespace splitscope {

enum class OpKind {
  kInput,      ///< the network input, or one time step of a sequence input
  kDense,      ///< matrix product + bias + activation
  kConv2d,     ///< (grouped) convolution + bias + activation
  kMaxPool,
  kAvgPool,
  kFlatten,    ///< a reshape; moves no data in a contiguous layout
  kSoftmax,
  kRelu,
  kTanh,
  kSigmoid,
  kLstmCell,   ///< one (stacked layer, time step) of an LSTM
  kGruCell,    ///< one (stacked layer, time step) of a GRU
  kStack,      ///< gathers the per-step outputs of a recurrent layer into [steps, hidden]
  kStepSlice,  ///< takes step t out of a [steps, features] tensor
  kAdd,        ///< element-wise sum of its inputs (a residual join)
  kConcat,     ///< its inputs laid end to end along axis 0
  // The backward pass of a training step (ir/training.hpp derives them).
  kLoss,              ///< the loss's gradient w.r.t. the network's logits (softmax + cross-entropy fused) or output (MSE)
  kActivationGrad,    ///< dX = dY ⊙ f'(Y), from the activation's output Y
  kDenseGradInput,    ///< dX = dZ·Wᵀ
  kDenseGradWeight,   ///< dW = Xᵀ·dZ, db = Σ rows dZ, added to the running sum of earlier micro-batches
  kConv2dGradInput,   ///< the convolution's adjoint (col2im)
  kConv2dGradWeight,  ///< dW = Σ dZ·im2col(X)ᵀ, db = Σ dZ
  kMaxPoolGrad,       ///< each window's gradient to the element the forward pass picked
  kAvgPoolGrad,       ///< each window's gradient spread over the window
  kUnflatten,         ///< flatten's inverse reshape: [C·H·W] -> [C, H, W]
  kChannelSlice,      ///< channels [offset, offset + C) of its input: a concat's gradient for one input
  kLstmCellGrad,      ///< an LSTM step's gate gradients [H, 4] and dc_{t-1}, its gates recomputed
  kGruCellGrad,       ///< a GRU step's gate gradients [H, 4] and the direct part of dh_{t-1}
  kCellGradInput,     ///< dx_t = (gate gradients)·Wxᵀ
  kCellGradHidden,    ///< dh_{t-1} = (gate gradients)·Whᵀ (+ the GRU's direct part)
  kCellGradWeight,    ///< dWx, dWh, db of one step, added to the later steps' sum
  // Normalization and regularization layers (after the cells, so that every earlier kind keeps its value).
  kBatchNorm,            ///< per-channel normalization by batch statistics (training) or running ones (inference)
  kLayerNorm,            ///< per-sample normalization over the last axis
  kDropout,              ///< an element-wise mask scaled by 1/(1 - rate) in training; the identity in inference
  kBatchNormGradInput,   ///< batch norm's dX, its batch statistics recomputed
  kBatchNormGradWeight,  ///< batch norm's dgamma, dbeta, added to the running sum
  kLayerNormGradInput,   ///< layer norm's dX, its row statistics recomputed
  kLayerNormGradWeight,  ///< layer norm's dgamma, dbeta, added to the running sum
  // The transformer's kinds (after normalization, so that every earlier kind keeps its value).
  kGelu,                 ///< x·Φ(x), PyTorch's default (erf) form
  kGeluGrad,             ///< dX = dY ⊙ GELU'(X), from the forward input X
  kEmbedding,            ///< token ids [T] -> rows of a table [vocab, features]: [T, features]
  kEmbeddingGradWeight,  ///< the table's gradient: dY's rows scatter-added at their ids
  kAttention,            ///< multi-head scaled dot-product attention: [T, 3·H] (Q | K | V) -> [T, H]
  kAttentionGrad,        ///< attention's d(Q | K | V), its probabilities recomputed
  kLinear,               ///< a dense layer at each position of a sequence: [T, in] -> [T, units]
  kLinearGradInput,      ///< linear's dX = dY·Wᵀ at each position
  kLinearGradWeight,     ///< linear's dW = Σ Xᵀ·dY, db = Σ dY, added to the running sum
};

std::string_view to_string(OpKind kind);

/// Input slots and outputs of the recurrent cells.
inline constexpr int kCellInputSlot = 0;    ///< x_t
inline constexpr int kCellHiddenSlot = 1;   ///< h_{t-1}
inline constexpr int kCellStateSlot = 2;    ///< c_{t-1} (LSTM only)
inline constexpr int kCellHiddenOutput = 0; ///< h_t
inline constexpr int kCellStateOutput = 1;  ///< c_t (LSTM only)

/// The op kinds in enum order (the op table's rows).
inline constexpr OpKind kLastOpKind = OpKind::kLinearGradWeight;
inline constexpr size_t kOpKindCount = static_cast<size_t>(kLastOpKind) + 1;

/// Shorthands for traits of the op's definition (ops/op_def.hpp).
bool is_weighted(OpKind kind);
bool is_channel_local(OpKind kind);
bool is_cell(OpKind kind);

/// Which part of a training step a node belongs to (a forward-only graph has
/// only forward nodes).
enum class Pass : uint8_t {
  kForward,
  kBackward,  ///< the loss and every gradient op
};

/// An op instance. Shapes are per sample; costs are for the whole batch.
struct OpNode {
  OpKind kind = OpKind::kInput;
  std::string name;
  OpAttrs attrs;      ///< the kind's attributes (dense activation, conv geometry, cell width, ...)
  int layer = -1;     ///< index of the network layer it was lowered from; -1 for a network input
  std::string layer_name;  ///< that layer's name ("input" for a network input)
  bool recurrent_layer = false;  ///< lowered from an lstm/gru layer (cells, their stack and step slices)
  int stacked = 1;    ///< cells stacked in that layer (1 for other layers)
  int sublayer = 0;   ///< stacked cell index within a recurrent layer
  int step = -1;      ///< time step (cells, step inputs, step slices); -1 otherwise
  std::vector<Shape> input_shapes;   ///< one per input slot
  std::vector<Shape> output_shapes;  ///< one per output
  int param_key = -1;       ///< the weight set it reads, shared by all steps of one stacked layer
  int64_t param_count = 0;  ///< elements in that weight set
  int64_t flops = 0;
  int64_t bytes_read = 0;     ///< connected inputs + parameters
  int64_t bytes_written = 0;  ///< outputs
  Pass pass = Pass::kForward;
  /// A backward node: the forward node it differentiates (its layer, its
  /// device). -1 for forward nodes.
  int64_t forward = -1;
};

}  // namespace splitscope
