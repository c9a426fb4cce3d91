// gru_cell_grad: one GRU step's backward, element-wise half, its gates
// recomputed. Reads x (0), h_{t-1} (1), dh_t (2); writes the gate gradients [H, 4] and the direct part of dh_{t-1}, dh ⊙ z
// (cell_rules.hpp: step_gradient_def holds what it costs and reads).
#include "ir/ops/cell_rules.hpp"

namespace splitscope {

const OpDef& gru_cell_grad_def() {
  static const OpDef def = cell_rules::step_gradient_def(OpKind::kGruCellGrad, "gru_cell_grad");
  return def;
}

}  // namespace splitscope
