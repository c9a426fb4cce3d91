// linear: a dense layer at each position of a sequence, Y[t] = X[t]·W + b,
// [T, in] -> [T, units] (a transformer's projections and MLP). FLOPs
// 2·rows·T·in·units; reads X and its weights, writes Y. Sliced by samples only
// and, for the tensor strategy, by
// features: its units (a column split) or its input features (a row split,
// leaving partial sums), ir/feature_cut.hpp.
#include "ir/gradient_builder.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/linear_rules.hpp"
#include "ir/ops/op_rules.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace linear_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const linear_rules::LinearDims d = linear_rules::slice_dims(node, slice);
  SliceCost c;
  c.flops = 2 * slice.batch.size() * d.positions * d.inputs * d.units;
  c.param_count = linear_rules::slice_param_count(node, slice);
  c.bytes_read = slice.batch.size() * d.positions * d.inputs * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

/// dX = dY·Wᵀ (where X wants one) and dW = Σ Xᵀ·dY, db = Σ dY.
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  SPLITSCOPE_CHECK(gradients.size() == 1 && gradients[0].has_value(), forward.name + ": one output gradient expected");
  const TensorRef dy = *gradients[0];
  const TensorRef x = builder.input(node, 0);
  if (builder.wants(x)) {
    builder.contribute(x, TensorRef{builder.add(OpKind::kLinearGradInput, node, "grad_input", {dy},
                                                forward.input_shapes.at(0), forward.attrs),
                                    0});
  }
  builder.add(OpKind::kLinearGradWeight, node, "grad_weight", {x, dy}, forward.output_shapes.at(0), forward.attrs);
}

}  // namespace linear_op

namespace linear_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.units = fields.required_positive("units", "the number of output features at each position");
  layer.attrs.bias = fields.optional_bool("bias", true);
  if (layer.input_shape.size() != 2) {
    fields.fail("", "linear applies a dense layer at each position of a sequence [positions, features], but gets " +
                        to_string(layer.input_shape) + "; use dense for a vector [features]");
  }
  layer.output_shape = {layer.input_shape[0], layer.units};
}

int64_t params(const Layer& layer) {
  return count_sum(count_product({layer.input_shape.at(1), layer.units}), layer.attrs.bias ? layer.units : 0);
}

/// A dense layer's product at each position.
int64_t flops(const Layer& layer, int64_t batch) {
  return count_product({layer.input_shape.at(0), dense_flops(layer.input_shape.at(1), layer.units, batch)});
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "linear";
    d.fields = {"units", "bias"};
    d.read = read;
    d.params = params;
    d.flops = flops;
    return d;
  }();
  return def;
}

}  // namespace linear_layer

const OpDef& linear_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kLinear;
    d.name = "linear";
    d.cost_class = CostClass::kMatrix;
    d.efficiency_like = "dense";
    d.cost = linear_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = linear_rules::signature;
    d.gemm = linear_rules::gemm;
    d.params = linear_rules::params;
    d.gradient = linear_op::gradient;
    d.param_range = linear_rules::whole_tensor;
    d.input_features = [](const OpNode&, const Slice& slice, int) { return linear_rules::x_features(slice); };
    d.output_features = [](const OpNode&, const Slice& slice) { return linear_rules::y_features(slice); };
    d.partial = linear_rules::forward_partial;
    d.device_calls = [](const SliceCalls& calls) {
      return linear_rules::carries_bias(calls.node, calls.slice) ? 2 : 1;
    };
    d.layer = &linear_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
