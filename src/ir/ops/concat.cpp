// concat: its inputs laid end to end along axis 0 (channels of images,
// features of vectors). A slice of output channels reads, from each input,
// only the part of it that lands inside the slice, which may be nothing: an
// empty range means the slice does not read that input. A copy: bytes only.
#include "ir/gradient_builder.hpp"
#include <algorithm>
#include <fmt/format.h>

#include "ir/network_fields.hpp"
#include "ir/ops/concat_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace concat_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written;
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int slot) {
  const int64_t offset = concat_offset(node, slot);
  const int64_t size = node.input_shapes.at(static_cast<size_t>(slot)).at(0);
  const int64_t begin = std::clamp(slice.out.begin - offset, int64_t{0}, size);
  const int64_t end = std::clamp(slice.out.end - offset, int64_t{0}, size);
  return begin < end ? Range{begin, end} : Range{0, 0};
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("concat:b{}:n{}:i{}", slice.batch.size(),
                     slice.out.size() * inner_count(node.output_shapes.at(0)), node.input_shapes.size());
}

/// Each input's gradient: its own channels of the output's.
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  // A copy: adding nodes moves the graph's nodes.
  const OpNode concat = builder.node(node);
  for (size_t slot = 0; slot < concat.input_shapes.size(); ++slot) {
    const TensorRef input = builder.input(node, static_cast<int>(slot));
    if (!builder.wants(input)) continue;
    OpAttrs attrs;
    attrs.offset = concat_offset(concat, static_cast<int>(slot));
    const Shape shape = concat.input_shapes[slot];
    builder.contribute(input, TensorRef{builder.add(OpKind::kChannelSlice, node, "grad" + std::to_string(slot),
                                                    {*gradients.at(0)}, shape, attrs),
                                        0});
  }
}

/// One copy per input the slice takes channels from.
int device_calls(const SliceCalls& calls) {
  int copies = 0;
  for (size_t slot = 0; slot < calls.node.input_shapes.size(); ++slot) {
    copies += input_channels(calls.node, calls.slice, static_cast<int>(slot)).size() > 0 ? 1 : 0;
  }
  return std::max(1, copies);
}

}  // namespace concat_op

/// Where input slot `slot` starts along a concat's output axis 0.
int64_t concat_offset(const OpNode& node, int slot) {
  int64_t offset = 0;
  for (int i = 0; i < slot; ++i) offset += node.input_shapes.at(static_cast<size_t>(i)).at(0);
  return offset;
}

namespace concat_layer {

/// Along axis 0 of flat vectors or of images of one height and width.
void read(const NetworkFields& fields, Layer& layer) {
  const Shape& first = layer.input_shapes[0];
  if (first.size() == 2) {
    fields.fail("inputs", "concat joins vectors [features] or images [channels, height, width], but '" +
                              layer.inputs[0] + "' is the sequence " + to_string(first) +
                              "; give its recurrent layer \"return_sequences\": false");
  }
  Shape out = first;
  for (size_t i = 1; i < layer.input_shapes.size(); ++i) {
    const Shape& shape = layer.input_shapes[i];
    const bool same_rank = shape.size() == first.size();
    const bool same_image = same_rank && (first.size() == 1 || (shape[1] == first[1] && shape[2] == first[2]));
    if (!same_image) {
      fields.fail("inputs", "concat joins along channels (or features) only, so its inputs must agree on the "
                            "other axes, but '" + layer.inputs[0] + "' is " + to_string(first) + " and '" +
                            layer.inputs[i] + "' is " + to_string(shape));
    }
    out[0] += shape[0];
  }
  layer.output_shape = out;
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "concat";
    d.joins = true;
    d.read = read;
    return d;
  }();
  return def;
}

}  // namespace concat_layer

const OpDef& concat_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kConcat;
    d.name = "concat";
    d.split.out = true;
    d.cost = concat_op::cost;
    d.input_channels = concat_op::input_channels;
    d.signature = concat_op::signature;
    d.gradient = concat_op::gradient;
    d.device_calls = concat_op::device_calls;
    d.rate_families = {"join"};
    d.layer = &concat_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
