// conv2d_grad_input: the convolution's adjoint, dX from dZ and W (per sample
// and group W_gᵀ·dZ_g, then col2im). Reads the forward layer's W
// [filters, in/groups, kh, kw]. FLOPs: the forward convolution's.
//
// Sliced beside a slice of the forward layer's filters (a vertical split),
// its reduce range is those filters and its output the channels of their
// groups: complete where the filters are whole groups (a grouped layer split
// along its groups needs no communication, as in the forward pass), a
// partial sum over all input channels otherwise (every filter of a group
// adds to every channel of it), all-reduced like a dense column split's dX.
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/ops/op_rules.hpp"
#include "ir/slice.hpp"

namespace splitscope {
namespace conv2d_grad_input_op {

using op_rules::kFloat;

int64_t filters_of(const OpNode& node) { return node.input_shapes.at(0).at(0); }
int64_t channels_of(const OpNode& node) { return node.output_shapes.at(0).at(0); }
int64_t filters_per_group(const OpNode& node) { return filters_of(node) / node.attrs.groups; }
int64_t in_per_group(const OpNode& node) { return channels_of(node) / node.attrs.groups; }

/// The groups `slice`'s filters touch.
int64_t groups_touched(const OpNode& node, const Slice& slice) {
  return group_channels(slice.reduce, filters_per_group(node), in_per_group(node)).size() / in_per_group(node);
}

SliceCost cost(const OpNode& node, const Slice& slice) {
  const Shape& dz = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  const int64_t filters = slice.reduce.size();
  SliceCost c;
  c.flops = conv2d_flops(filters, dz.at(1), dz.at(2), in_per_group(node), a.kernel.h, a.kernel.w, slice.batch.size());
  c.param_count = filters * in_per_group(node) * a.kernel.h * a.kernel.w;
  c.bytes_read = slice.batch.size() * filters * inner_count(dz) * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

/// dZ of the slice's filters.
Range input_channels(const OpNode&, const Slice& slice, int) { return slice.reduce; }

/// Partial unless its filters are every filter of the groups it writes.
bool partial(const OpNode& node, const Slice& slice) {
  const Range complete{slice.out.begin / in_per_group(node) * filters_per_group(node),
                       slice.out.end / in_per_group(node) * filters_per_group(node)};
  return slice.reduce != complete;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const Shape& out = node.output_shapes.at(0);
  const OpAttrs& a = node.attrs;
  return fmt::format("conv2d_grad_input:b{}:c{}:h{}:w{}:f{}:k{}x{}:s{}x{}:p{}x{}:g{}", slice.batch.size(),
                     slice.out.size(), out.at(1), out.at(2), slice.reduce.size(), a.kernel.h, a.kernel.w, a.stride.h,
                     a.stride.w, a.padding.h, a.padding.w, groups_touched(node, slice));
}

std::vector<ParamTensor> params(const OpNode& node) {
  const OpAttrs& a = node.attrs;
  std::vector<ParamTensor> tensors{{"W", {filters_of(node), in_per_group(node), a.kernel.h, a.kernel.w}, 0.0f}};
  if (a.bias) tensors.push_back({"b", {filters_of(node)}, 0.0f});
  return tensors;
}

/// The forward slice's weights: its filters, all of their input channels.
Slice param_slice(const OpNode& node, const Slice& slice) {
  return Slice{slice.batch, slice.reduce, {0, channels_of(node)}, {}};
}

/// Per sample and touched group: columns [patch × pixels] = W_gᵀ [patch × its filters] · dZ_g [its filters × pixels].
GemmDims gemm(const OpNode& node, const Slice& slice) {
  const Shape& dz = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  const int64_t groups = groups_touched(node, slice);
  return GemmDims{in_per_group(node) * a.kernel.h * a.kernel.w, dz.at(1) * dz.at(2), slice.reduce.size() / groups,
                  slice.batch.size() * groups};
}

/// Beside a forward slice of filters: the channels of their groups when they
/// are whole groups, else every channel (so that the partial sums of the
/// slices of one layer cover the same channels, as an all-reduce needs).
Slice from_forward(const OpNode& node, const Slice& forward) {
  const Range channels = whole_groups(forward.out, filters_per_group(node))
                             ? group_channels(forward.out, filters_per_group(node), in_per_group(node))
                             : Range{0, channels_of(node)};
  return Slice{forward.batch, channels, forward.out, {}};
}

/// One call per piece, and a zero fill where the pieces leave channels unwritten.
int device_calls(const SliceCalls& calls) {
  const OpAttrs& attrs = calls.node.attrs;
  const int64_t per_group = calls.node.input_shapes.at(0).at(0) / attrs.groups;
  const int64_t channels = calls.node.output_shapes.at(0).at(0) / attrs.groups;
  const int zero = group_channels(calls.slice.reduce, per_group, channels) != calls.slice.out ? 1 : 0;
  return static_cast<int>(group_pieces(calls.slice.reduce, per_group).size()) + zero;
}

}  // namespace conv2d_grad_input_op

const OpDef& conv2d_grad_input_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kConv2dGradInput;
    d.name = "conv2d_grad_input";
    d.efficiency_like = "conv2d";
    d.cost_class = CostClass::kMatrix;
    d.weighted = true;
    d.split.out = true;
    d.split.reduce = true;
    d.cost = conv2d_grad_input_op::cost;
    d.input_channels = conv2d_grad_input_op::input_channels;
    d.partial = conv2d_grad_input_op::partial;
    d.signature = conv2d_grad_input_op::signature;
    d.from_forward = conv2d_grad_input_op::from_forward;
    d.gemm = conv2d_grad_input_op::gemm;
    d.params = conv2d_grad_input_op::params;
    d.param_slice = conv2d_grad_input_op::param_slice;
    d.device_calls = conv2d_grad_input_op::device_calls;
    d.rate_families = {"conv_data_gradient", "conv_forward"};
    d.conv_pass = ConvPass::kDataGradient;
    return d;
  }();
  return def;
}

}  // namespace splitscope
