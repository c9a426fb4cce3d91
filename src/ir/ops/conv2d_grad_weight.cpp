// conv2d_grad_weight: dW = Σ_samples dZ_g·im2col(X_g)ᵀ per group and
// db = Σ dZ over samples and pixels, added to the running sum of earlier
// micro-batches. Reads X (slot 0) and dZ (slot 1); writes the gradient of
// the forward slice's weights. FLOPs: the forward convolution's + the bias sum.
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace conv2d_grad_weight_op {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const Shape& dz = node.input_shapes.at(1);
  const OpAttrs& a = node.attrs;
  const int64_t rows = slice.batch.size();
  const int64_t filters = slice.out.size();
  const int64_t per_group = in.at(0) / a.groups;
  const int64_t pixels = dz.at(1) * dz.at(2);
  SliceCost c;
  c.flops = conv2d_flops(filters, dz.at(1), dz.at(2), per_group, a.kernel.h, a.kernel.w, rows) +
            (a.bias ? rows * filters * pixels : 0);
  const Range read = conv_input_channels(node, slice.out);
  c.bytes_read = rows * (read.size() * inner_count(in) + filters * pixels) * kFloat;
  c.bytes_written = (filters * per_group * a.kernel.h * a.kernel.w + (a.bias ? filters : 0)) * kFloat;
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int slot) {
  return slot == 0 ? conv_input_channels(node, slice.out) : slice.out;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  return fmt::format("conv2d_grad_weight:b{}:c{}:h{}:w{}:f{}:k{}x{}:s{}x{}:p{}x{}:g{}", slice.batch.size(), in.at(0),
                     in.at(1), in.at(2), slice.out.size(), a.kernel.h, a.kernel.w, a.stride.h, a.stride.w,
                     a.padding.h, a.padding.w, a.groups);
}

/// Per sample and group: dW_g [filters/g × patch] += dZ_g [filters/g × pixels] · im2col(X_g)ᵀ [pixels × patch].
GemmDims gemm(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const Shape& dz = node.input_shapes.at(1);
  const OpAttrs& a = node.attrs;
  const int64_t groups = conv_input_channels(node, slice.out).size() / (in.at(0) / a.groups);
  return GemmDims{slice.out.size() / groups, in.at(0) / a.groups * a.kernel.h * a.kernel.w, dz.at(1) * dz.at(2),
                  slice.batch.size() * groups};
}

Slice from_forward(const OpNode&, const Slice& forward) { return forward; }

/// One call per piece, the bias sum, and the running sum copied in.
int device_calls(const SliceCalls& calls) {
  const OpAttrs& attrs = calls.node.attrs;
  const auto pieces = group_pieces(calls.slice.out, calls.node.input_shapes.at(1).at(0) / attrs.groups);
  return static_cast<int>(pieces.size()) + (attrs.bias ? 1 : 0) + (calls.adds_running_sum ? 1 : 0);
}

}  // namespace conv2d_grad_weight_op

const OpDef& conv2d_grad_weight_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kConv2dGradWeight;
    d.name = "conv2d_grad_weight";
    d.efficiency_like = "conv2d";
    d.cost_class = CostClass::kMatrix;
    d.writes_gradient = true;
    d.split.out = true;
    d.cost = conv2d_grad_weight_op::cost;
    d.input_channels = conv2d_grad_weight_op::input_channels;
    d.signature = conv2d_grad_weight_op::signature;
    d.from_forward = conv2d_grad_weight_op::from_forward;
    d.gemm = conv2d_grad_weight_op::gemm;
    d.device_calls = conv2d_grad_weight_op::device_calls;
    d.rate_families = {"conv_filter_gradient", "conv_forward"};
    d.conv_pass = ConvPass::kFilterGradient;
    return d;
  }();
  return def;
}

}  // namespace splitscope
