// linear_grad_weight: dW = Σ_{rows, t} X[t]ᵀ·dY[t] and db = Σ dY, added to the
// running sum of the micro-batches before it. Reads X (slot 0) and dY
// (slot 1); writes in·units (+ units) floats (OpDef::writes_gradient).
// FLOPs 2·rows·T·in·units + rows·T·units (the bias's sum), as dense_grad_weight's.
#include "ir/ops/linear_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace linear_grad_weight_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const linear_rules::LinearDims d = linear_rules::slice_dims(node, slice);
  const int64_t rows = slice.batch.size() * d.positions;
  SliceCost c;
  c.flops = 2 * rows * d.inputs * d.units + (linear_rules::carries_bias(node, slice) ? rows * d.units : 0);
  c.bytes_read = rows * (d.inputs + d.units) * kFloat;
  c.bytes_written = linear_rules::slice_param_count(node, slice) * kFloat;
  return c;
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

}  // namespace linear_grad_weight_op

const OpDef& linear_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLinearGradWeight;
    d.name = "linear_grad_weight";
    d.cost_class = CostClass::kMatrix;
    d.efficiency_like = "dense";
    d.writes_gradient = true;
    d.cost = linear_grad_weight_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = linear_rules::signature;
    d.gemm = linear_rules::gemm;
    d.from_forward = linear_grad_weight_op::from_forward;
    d.param_range = linear_rules::whole_tensor;
    d.input_features = [](const OpNode&, const Slice& slice, int slot) {
      return slot == 0 ? linear_rules::x_features(slice) : linear_rules::y_features(slice);
    };
    d.device_calls = [](const SliceCalls& calls) {
      return 1 + (linear_rules::carries_bias(calls.node, calls.slice) ? 1 : 0) + (calls.adds_running_sum ? 1 : 0);
    };
    return d;
  }();
  return def;
}

}  // namespace splitscope
