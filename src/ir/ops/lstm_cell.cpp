// lstm_cell: one (stacked layer, time step) of an LSTM: gates i, f, g, o; outputs h_t and c_t.
#include "ir/ops/cell_rules.hpp"

namespace splitscope {
namespace {

constexpr int64_t kGates = 4;

SliceCost cost(const OpNode& node, const Slice& slice) { return cell_rules::cost(node, slice, kGates, true); }
std::vector<ParamTensor> params(const OpNode& node) { return cell_rules::params(node, kGates); }

}  // namespace

const OpDef& lstm_cell_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLstmCell;
    d.name = "lstm_cell";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.cell = true;
    d.split.out = true;
    d.cost = cost;
    d.input_channels = cell_rules::input_channels;
    d.signature = cell_rules::signature;
    d.params = params;
    return d;
  }();
  return def;
}

}  // namespace splitscope
