// gru_cell: one (stacked layer, time step) of a GRU: gates r, z, n, with
// n = tanh(x·Wx_n + b_n + r ⊙ (h·Wh_n)) (cuDNN's and PyTorch's form); output h_t.
#include "ir/ops/cell_rules.hpp"
#include "ir/ops/gradient_rules.hpp"
#include "ir/ops/layer_def.hpp"

namespace splitscope {
namespace gru_cell_op {

constexpr int64_t kGates = 3;

SliceCost cost(const OpNode& node, const Slice& slice) { return cell_rules::cost(node, slice, kGates, false); }
std::vector<ParamTensor> params(const OpNode& node) { return cell_rules::params(node, kGates); }

}  // namespace gru_cell_op

namespace gru_cell_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::cell(builder, node, gradients, true);
}
}  // namespace gru_cell_op

namespace gru_cell_layer {

const LayerDef& definition() {
  static const LayerDef def = cell_rules::layer_definition("gru");
  return def;
}

}  // namespace gru_cell_layer

const OpDef& gru_cell_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kGruCell;
    d.name = "gru_cell";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.cell = true;
    d.split.out = true;
    d.cost = gru_cell_op::cost;
    d.input_channels = cell_rules::input_channels;
    d.signature = cell_rules::signature;
    d.params = gru_cell_op::params;
    d.gradient = gru_cell_op::gradient;
    d.device_calls = cell_rules::step_calls;
    d.layer = &gru_cell_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
