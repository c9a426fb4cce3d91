// conv2d: grouped convolution + bias + activation. W [filters, in/groups, kh, kw], b [filters].
// FLOPs 2·filters·Hout·Wout·(Cin/groups)·kh·kw·rows; a slice of filters reads
// only the input channels of the groups those filters belong to.
#include "ir/ops/gradient_rules.hpp"
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/layer_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace conv2d_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const Shape& out = node.output_shapes.at(0);
  const OpAttrs& a = node.attrs;
  const int64_t rows = slice.batch.size();
  const int64_t filters = slice.out.size();
  const int64_t in_per_group = in.at(0) / a.groups;
  SliceCost c;
  c.flops = conv2d_flops(filters, out.at(1), out.at(2), in_per_group, a.kernel.h, a.kernel.w, rows);
  c.param_count = filters * in_per_group * a.kernel.h * a.kernel.w + (a.bias ? filters : 0);
  const Range read = conv_input_channels(node, slice.out);
  c.bytes_read = rows * read.size() * inner_count(in) * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int) { return conv_input_channels(node, slice.out); }

std::string signature(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  const Range read = conv_input_channels(node, slice.out);
  const int64_t groups = read.size() / (in.at(0) / a.groups);
  return fmt::format("conv2d:b{}:c{}:h{}:w{}:f{}:k{}x{}:s{}x{}:p{}x{}:g{}", slice.batch.size(), read.size(),
                     in.at(1), in.at(2), slice.out.size(), a.kernel.h, a.kernel.w, a.stride.h, a.stride.w,
                     a.padding.h, a.padding.w, groups);
}

std::vector<ParamTensor> params(const OpNode& node) {
  const OpAttrs& a = node.attrs;
  const int64_t filters = node.output_shapes.at(0).at(0);
  const int64_t in_per_group = node.input_shapes.at(0).at(0) / a.groups;
  const int64_t fan_in = in_per_group * a.kernel.h * a.kernel.w;
  const float bias_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
  std::vector<ParamTensor> tensors{
      {"W", {filters, in_per_group, a.kernel.h, a.kernel.w}, op_rules::weight_scale(fan_in, a.activation)}};
  if (a.bias) tensors.push_back({"b", {filters}, bias_scale});
  return tensors;
}

/// One convolution per run of whole groups the slice's filters cover, then
/// one pass for the bias and activation.
int device_calls(const SliceCalls& calls) {
  const OpAttrs& attrs = calls.node.attrs;
  const auto pieces = group_pieces(calls.slice.out, calls.node.output_shapes.at(0).at(0) / attrs.groups);
  return static_cast<int>(pieces.size()) + ((attrs.bias || attrs.activation != Activation::kNone) ? 1 : 0);
}

}  // namespace conv2d_op

Range conv_input_channels(const OpNode& conv, Range out) {
  const int64_t groups = conv.attrs.groups;
  return group_channels(out, conv.output_shapes.at(0).at(0) / groups, conv.input_shapes.at(0).at(0) / groups);
}

Range group_channels(Range filters, int64_t filters_per_group, int64_t channels_per_group) {
  const int64_t first_group = filters.begin / filters_per_group;
  const int64_t last_group = (filters.end - 1) / filters_per_group;
  return {first_group * channels_per_group, (last_group + 1) * channels_per_group};
}

bool whole_groups(Range filters, int64_t filters_per_group) {
  return filters.begin % filters_per_group == 0 && filters.end % filters_per_group == 0;
}

std::vector<Range> group_pieces(Range filters, int64_t filters_per_group) {
  if (whole_groups(filters, filters_per_group)) return {filters};
  std::vector<Range> pieces;
  for (int64_t g = filters.begin / filters_per_group; g * filters_per_group < filters.end; ++g) {
    pieces.push_back({std::max(filters.begin, g * filters_per_group), std::min(filters.end, (g + 1) * filters_per_group)});
  }
  return pieces;
}

namespace conv2d_op {
void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  gradient_rules::weighted(builder, node, gradients, OpKind::kConv2dGradInput, OpKind::kConv2dGradWeight);
}
}  // namespace conv2d_op

namespace conv2d_layer {

void read(const NetworkFields& fields, Layer& layer) {
  OpAttrs& a = layer.attrs;
  layer.filters = fields.required_positive("filters", "the number of output channels");
  fields.required("kernel", "the filter size, an int or [h, w]");
  a.kernel = fields.extent("kernel", {0, 0}, 1);
  a.stride = fields.extent("stride", {1, 1}, 1);
  a.padding = fields.extent("padding", {0, 0}, 0);
  a.groups = fields.optional_positive("groups", 1);
  a.activation = fields.activation();
  a.bias = fields.optional_bool("bias", true);
  layer_rules::require_image(fields, layer);
  const Shape& in = layer.input_shape;
  if (in[0] % a.groups != 0) {
    fields.fail("groups", "the input's " + std::to_string(in[0]) + " channels are not divisible by groups = " +
                              std::to_string(a.groups));
  }
  if (layer.filters % a.groups != 0) {
    fields.fail("groups", "filters = " + std::to_string(layer.filters) + " is not divisible by groups = " +
                              std::to_string(a.groups));
  }
  layer_rules::check_kernel_fits(fields, layer, a.padding);
  layer.output_shape = {layer.filters, layer_rules::window_output(in[1], a.kernel.h, a.stride.h, a.padding.h),
                        layer_rules::window_output(in[2], a.kernel.w, a.stride.w, a.padding.w)};
}

int64_t params(const Layer& layer) {
  const OpAttrs& a = layer.attrs;
  const int64_t in_per_group = layer.input_shape.at(0) / a.groups;
  return count_sum(count_product({layer.filters, in_per_group, a.kernel.h, a.kernel.w}), a.bias ? layer.filters : 0);
}

int64_t flops(const Layer& layer, int64_t batch) {
  const OpAttrs& a = layer.attrs;
  return conv2d_flops(layer.filters, layer.output_shape.at(1), layer.output_shape.at(2),
                      layer.input_shape.at(0) / a.groups, a.kernel.h, a.kernel.w, batch);
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "conv2d";
    d.fields = {"filters", "kernel", "stride", "padding", "groups", "activation", "bias"};
    d.read = read;
    d.params = params;
    d.flops = flops;
    return d;
  }();
  return def;
}

}  // namespace conv2d_layer

const OpDef& conv2d_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kConv2d;
    d.name = "conv2d";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.split.out = true;
    d.cost = conv2d_op::cost;
    d.input_channels = conv2d_op::input_channels;
    d.signature = conv2d_op::signature;
    d.params = conv2d_op::params;
    d.gradient = conv2d_op::gradient;
    d.device_calls = conv2d_op::device_calls;
    d.rate_families = {"conv_forward"};
    d.conv_pass = ConvPass::kForward;
    d.layer_product = true;
    d.layer = &conv2d_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
