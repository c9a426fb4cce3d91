#include "ir/op.hpp"

namespace splitscope {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kInput: return "input";
    case OpKind::kDense: return "dense";
    case OpKind::kConv2d: return "conv2d";
    case OpKind::kMaxPool: return "maxpool";
    case OpKind::kAvgPool: return "avgpool";
    case OpKind::kFlatten: return "flatten";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kRelu: return "relu";
    case OpKind::kTanh: return "tanh";
    case OpKind::kSigmoid: return "sigmoid";
    case OpKind::kLstmCell: return "lstm_cell";
    case OpKind::kGruCell: return "gru_cell";
    case OpKind::kStack: return "stack";
    case OpKind::kStepSlice: return "step_slice";
  }
  return "?";
}

bool is_weighted(OpKind kind) {
  return kind == OpKind::kDense || kind == OpKind::kConv2d || is_cell(kind);
}

bool is_channel_local(OpKind kind) {
  switch (kind) {
    case OpKind::kMaxPool:
    case OpKind::kAvgPool:
    case OpKind::kFlatten:
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      return true;
    default:
      return false;
  }
}

bool is_cell(OpKind kind) { return kind == OpKind::kLstmCell || kind == OpKind::kGruCell; }

}  // namespace splitscope
