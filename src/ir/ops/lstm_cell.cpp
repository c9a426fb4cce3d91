// lstm_cell: one (stacked layer, time step) of an LSTM: gates i, f, g, o; outputs h_t and c_t.
#include "ir/ops/cell_rules.hpp"
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"

namespace splitscope {
namespace lstm_cell_op {

constexpr int64_t kGates = 4;

SliceCost cost(const OpNode& node, const Slice& slice) { return cell_rules::cost(node, slice, kGates, true); }
std::vector<ParamTensor> params(const OpNode& node) { return cell_rules::params(node, kGates); }

}  // namespace lstm_cell_op

namespace lstm_cell_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::cell(builder, node, gradients, false);
}
}  // namespace lstm_cell_op

namespace lstm_cell_layer {

const LayerDef& definition() {
  static const LayerDef def = cell_rules::layer_definition("lstm");
  return def;
}

}  // namespace lstm_cell_layer

const OpDef& lstm_cell_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLstmCell;
    d.name = "lstm_cell";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.cell = true;
    d.split.out = true;
    d.cost = lstm_cell_op::cost;
    d.input_channels = cell_rules::input_channels;
    d.signature = cell_rules::signature;
    d.params = lstm_cell_op::params;
    d.gradient = lstm_cell_op::gradient;
    d.device_calls = cell_rules::step_calls;
    d.layer = &lstm_cell_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
