// dense: Y = act(X·W + b). W [in, units], b [units].
// FLOPs 2·rows·k·n for a slice of n units over k input features; a slice
// along the input features (a row split) is a partial sum that adds the bias
// only where the reduction starts.
#include "ir/ops/gradient_rules.hpp"
#include "ir/params.hpp"
#include <cmath>
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace dense_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const int64_t rows = slice.batch.size();
  const int64_t k = slice.reduce.size();
  const int64_t n = slice.out.size();
  SliceCost c;
  c.flops = dense_flops(k, n, rows);
  c.param_count = k * n + (node.attrs.bias && slice.reduce.begin == 0 ? n : 0);
  c.bytes_read = rows * k * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

Range input_channels(const OpNode&, const Slice& slice, int) { return slice.reduce; }

std::string signature(const OpNode&, const Slice& slice) {
  return fmt::format("dense:b{}:k{}:n{}", slice.batch.size(), slice.reduce.size(), slice.out.size());
}

std::vector<ParamTensor> params(const OpNode& node) {
  const int64_t in = node.input_shapes.at(0).at(0);
  const int64_t units = node.output_shapes.at(0).at(0);
  const float bias_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in)));
  std::vector<ParamTensor> tensors{{"W", {in, units}, op_rules::weight_scale(in, node.attrs.activation)}};
  if (node.attrs.bias) tensors.push_back({"b", {units}, bias_scale});
  return tensors;
}

/// The GEMM; then one pass adding the bias and applying the activation,
/// unless the slice is a partial sum without the bias (the epilogue
/// activates the all-reduced sum).
int device_calls(const SliceCalls& calls) {
  const bool partial = calls.slice.is_partial(calls.node);
  const bool bias = slice_carries_bias(calls.node, calls.slice.reduce);
  return 1 + ((bias || (!partial && calls.node.attrs.activation != Activation::kNone)) ? 1 : 0);
}

}  // namespace dense_op

namespace dense_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::weighted(builder, node, gradients, OpKind::kDenseGradInput, OpKind::kDenseGradWeight);
}
}  // namespace dense_op

namespace dense_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.units = fields.required_positive("units", "the number of output neurons");
  layer.attrs.activation = fields.activation();
  layer.attrs.bias = fields.optional_bool("bias", true);
  const Shape& in = layer.input_shape;
  if (in.size() == 3) {
    fields.fail("", "dense needs a flat input [features], but gets the image " + to_string(in) +
                        "; add {\"type\": \"flatten\"} before it");
  }
  if (in.size() == 2) {
    fields.fail("", "dense needs a flat input [features], but gets the sequence " + to_string(in) +
                        "; give the recurrent layer \"return_sequences\": false, or add "
                        "{\"type\": \"flatten\"} before it");
  }
  layer.output_shape = {layer.units};
}

int64_t params(const Layer& layer) {
  return count_sum(count_product({layer.input_shape.at(0), layer.units}), layer.attrs.bias ? layer.units : 0);
}

int64_t flops(const Layer& layer, int64_t batch) { return dense_flops(layer.input_shape.at(0), layer.units, batch); }

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "dense";
    d.fields = {"units", "activation", "bias"};
    d.read = read;
    d.params = params;
    d.flops = flops;
    return d;
  }();
  return def;
}

}  // namespace dense_layer

const OpDef& dense_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kDense;
    d.name = "dense";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.split.out = true;
    d.split.reduce = true;
    d.cost = dense_op::cost;
    d.input_channels = dense_op::input_channels;
    d.signature = dense_op::signature;
    d.params = dense_op::params;
    d.gradient = dense_op::gradient;
    d.device_calls = dense_op::device_calls;
    d.layer_product = true;
    d.layer = &dense_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
