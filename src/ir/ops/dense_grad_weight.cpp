// dense_grad_weight: dW = Xᵀ·dZ and db = Σ_rows dZ over its rows, added to
// the running sum of the micro-batches before it. Reads X (slot 0, the
// forward input) and dZ (slot 1); writes the gradient of the forward slice's
// weights (OpDef::writes_gradient). FLOPs 2·rows·in·units + rows·units.
#include <fmt/format.h>
#include "ir/params.hpp"

#include "ir/layer_costs.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace dense_grad_weight_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t k = slice.reduce.size();  // input features: rows of dW
  const int64_t n = slice.out.size();     // units: columns of dW
  // The bias's gradient comes with the slice that starts the reduction (as its weights do).
  const int64_t bias = node.attrs.bias && slice.reduce.begin == 0 ? n : 0;
  SliceCost c;
  c.flops = dense_flops(k, n, rows) + rows * bias;
  c.bytes_read = rows * (k + n) * kFloat;
  c.bytes_written = (k * n + bias) * kFloat;
  return c;
}

Range input_channels(const OpNode&, const Slice& slice, int slot) { return slot == 0 ? slice.reduce : slice.out; }

std::string signature(const OpNode&, const Slice& slice) {
  return fmt::format("dense_grad_weight:b{}:k{}:n{}", slice.batch.size(), slice.reduce.size(), slice.out.size());
}

GemmDims gemm(const OpNode&, const Slice& slice) {
  return GemmDims{slice.reduce.size(), slice.out.size(), slice.batch.size(), 1};
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

/// dW, the bias sum where the slice holds the bias, and the running sum copied in.
int device_calls(const SliceCalls& calls) {
  return 1 + (slice_carries_bias(calls.node, calls.slice.reduce) ? 1 : 0) + (calls.adds_running_sum ? 1 : 0);
}

}  // namespace dense_grad_weight_op

const OpDef& dense_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kDenseGradWeight;
    d.name = "dense_grad_weight";
    d.efficiency_like = "dense";
    d.cost_class = CostClass::kMatrix;
    d.writes_gradient = true;
    d.split.out = true;
    d.cost = dense_grad_weight_op::cost;
    d.input_channels = dense_grad_weight_op::input_channels;
    d.signature = dense_grad_weight_op::signature;
    d.from_forward = dense_grad_weight_op::from_forward;
    d.gemm = dense_grad_weight_op::gemm;
    d.device_calls = dense_grad_weight_op::device_calls;
    return d;
  }();
  return def;
}

}  // namespace splitscope
