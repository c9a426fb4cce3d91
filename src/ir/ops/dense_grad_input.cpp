// dense_grad_input: dX = dZ·Wᵀ, reading the forward layer's W [in, units].
// Its output axis is the layer's input features and its reduction axis the
// layer's units, so its parameter slice is the forward slice transposed.
// FLOPs 2·rows·in·units, the forward product's.
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/ops/op_rules.hpp"
#include "ir/slice.hpp"

namespace splitscope {
namespace dense_grad_input_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t k = slice.reduce.size();  // units
  const int64_t n = slice.out.size();     // input features
  SliceCost c;
  c.flops = dense_flops(k, n, rows);
  c.param_count = k * n;  // W only: the bias has no gradient w.r.t. X
  c.bytes_read = rows * k * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

Range input_channels(const OpNode&, const Slice& slice, int) { return slice.reduce; }

std::string signature(const OpNode&, const Slice& slice) {
  return fmt::format("dense_grad_input:b{}:k{}:n{}", slice.batch.size(), slice.reduce.size(), slice.out.size());
}

/// The forward layer's tensors: W [in, units] (in = this op's output), b [units].
std::vector<ParamTensor> params(const OpNode& node) {
  const int64_t in = node.output_shapes.at(0).at(0);
  const int64_t units = node.input_shapes.at(0).at(0);
  std::vector<ParamTensor> tensors{{"W", {in, units}, 0.0f}};
  if (node.attrs.bias) tensors.push_back({"b", {units}, 0.0f});
  return tensors;
}

Slice param_slice(const OpNode&, const Slice& slice) { return Slice{slice.batch, slice.reduce, slice.out, {}}; }

/// dX of the forward slice's units: a partial sum over them where the forward
/// layer is split by units (a column split), its own input features where
/// the forward slice is a row split.
Slice from_forward(const OpNode&, const Slice& forward) { return Slice{forward.batch, forward.reduce, forward.out, {}}; }

}  // namespace dense_grad_input_op

const OpDef& dense_grad_input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kDenseGradInput;
    d.name = "dense_grad_input";
    d.efficiency_like = "dense";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.split.out = true;
    d.split.reduce = true;
    d.cost = dense_grad_input_op::cost;
    d.input_channels = dense_grad_input_op::input_channels;
    d.signature = dense_grad_input_op::signature;
    d.from_forward = dense_grad_input_op::from_forward;
    d.params = dense_grad_input_op::params;
    d.param_slice = dense_grad_input_op::param_slice;
    d.device_calls = op_rules::one_device_call;
    return d;
  }();
  return def;
}

}  // namespace splitscope
