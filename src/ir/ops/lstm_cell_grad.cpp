// lstm_cell_grad: one LSTM step's backward, element-wise half, its gates
// recomputed. Reads x (0), h_{t-1} (1), c_{t-1} (2), dh_t (3), dc_t (4); writes the gate gradients [H, 4] and dc_{t-1}
// (cell_rules.hpp: step_gradient_def holds what it costs and reads).
#include "ir/ops/cell_rules.hpp"

namespace splitscope {

const OpDef& lstm_cell_grad_def() {
  static const OpDef def = cell_rules::step_gradient_def(OpKind::kLstmCellGrad, "lstm_cell_grad");
  return def;
}

}  // namespace splitscope
