// linear_grad_input: dX[t] = dY[t]·Wᵀ at each position, reading the forward
// W [in, units]. FLOPs 2·rows·T·in·units, the forward product's.
#include "ir/ops/linear_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace linear_grad_input_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const linear_rules::LinearDims d = linear_rules::slice_dims(node, slice);
  SliceCost c;
  c.flops = 2 * slice.batch.size() * d.positions * d.inputs * d.units;
  c.param_count = linear_rules::slice_param_count(node, slice);  // the forward's parameter value (it reads its W)
  c.bytes_read = slice.batch.size() * d.positions * d.units * kFloat + d.inputs * d.units * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

}  // namespace linear_grad_input_op

const OpDef& linear_grad_input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLinearGradInput;
    d.name = "linear_grad_input";
    d.cost_class = CostClass::kMatrix;
    d.efficiency_like = "dense";
    d.cost = linear_grad_input_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = linear_rules::signature;
    d.gemm = linear_rules::gemm;
    d.from_forward = linear_grad_input_op::from_forward;
    d.params = linear_rules::params;  // it reads its forward op's W
    d.param_range = linear_rules::whole_tensor;
    // dY is the forward's Y, dX its X: a column split reads its units of dY
    // and sums over them; a row split writes its input features of dX.
    d.input_features = [](const OpNode&, const Slice& slice, int) { return linear_rules::y_features(slice); };
    d.output_features = [](const OpNode&, const Slice& slice) { return linear_rules::x_features(slice); };
    d.partial = linear_rules::grad_input_partial;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
