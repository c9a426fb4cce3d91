#pragma once
/// \file
/// One node of the Graph: an op instance with its shapes and costs.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
};

std::string_view to_string(OpKind kind);

/// Input slots and outputs of the recurrent cells.
inline constexpr int kCellInputSlot = 0;    ///< x_t
inline constexpr int kCellHiddenSlot = 1;   ///< h_{t-1}
inline constexpr int kCellStateSlot = 2;    ///< c_{t-1} (LSTM only)
inline constexpr int kCellHiddenOutput = 0; ///< h_t
inline constexpr int kCellStateOutput = 1;  ///< c_t (LSTM only)

/// True for the ops that carry weights and split along their output channels
/// (dense units, conv filters, cell hidden units).
bool is_weighted(OpKind kind);
/// True for the element-wise ops (activation, pooling per channel, flatten):
/// a slice of the output needs only the matching slice of the input.
bool is_channel_local(OpKind kind);
bool is_cell(OpKind kind);

/// An op instance. Shapes are per sample; costs are for the whole batch.
struct OpNode {
  OpKind kind = OpKind::kInput;
  std::string name;
  int layer = -1;     ///< index into Model::layers; -1 for the network input
  int sublayer = 0;   ///< stacked cell index within a recurrent layer
  int step = -1;      ///< time step (cells, step inputs, step slices); -1 otherwise
  std::vector<Shape> input_shapes;   ///< one per input slot
  std::vector<Shape> output_shapes;  ///< one per output
  int param_key = -1;       ///< the weight set it reads, shared by all steps of one stacked layer
  int64_t param_count = 0;  ///< elements in that weight set
  int64_t flops = 0;
  int64_t bytes_read = 0;     ///< connected inputs + parameters
  int64_t bytes_written = 0;  ///< outputs
};

}  // namespace splitscope
