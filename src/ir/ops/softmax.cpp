// softmax over a flat [F] input. A slice of outputs still reads whole rows
// (the normaliser needs every element); bytes only.
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace softmax_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = slice.batch.size() * element_count(node.input_shapes.at(0)) * op_rules::kFloat;
  return c;
}

}  // namespace softmax_op

namespace softmax_layer {

void read(const NetworkFields& fields, Layer& layer) {
  if (layer.input_shape.size() != 1) {
    fields.fail("", "softmax needs a flat input [features], but gets " + to_string(layer.input_shape) +
                        "; add {\"type\": \"flatten\"} before it");
  }
  layer.output_shape = layer.input_shape;
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "softmax";
    d.read = read;
    return d;
  }();
  return def;
}

}  // namespace softmax_layer

const OpDef& softmax_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kSoftmax;
    d.name = "softmax";
    d.cost = softmax_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    d.layer = &softmax_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
