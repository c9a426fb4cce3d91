// conv2d_grad_input: the convolution's adjoint, dX from dZ and W (per sample
// and group W_gᵀ·dZ_g, then col2im). Reads the forward layer's W
// [filters, in/groups, kh, kw]. FLOPs: the forward convolution's. Whole
// layers only: its parameter slice is the forward layer's whole weight set.
#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/ops/op_rules.hpp"
#include "ir/slice.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace conv2d_grad_input_op {

using op_rules::kFloat;

int64_t filters_of(const OpNode& node) { return node.input_shapes.at(0).at(0); }
int64_t in_per_group(const OpNode& node) { return node.output_shapes.at(0).at(0) / node.attrs.groups; }

SliceCost cost(const OpNode& node, const Slice& slice) {
  const Shape& dz = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  SliceCost c;
  c.flops = conv2d_flops(filters_of(node), dz.at(1), dz.at(2), in_per_group(node), a.kernel.h, a.kernel.w,
                         slice.batch.size());
  c.param_count = filters_of(node) * in_per_group(node) * a.kernel.h * a.kernel.w;
  c.bytes_read = slice.batch.size() * element_count(dz) * kFloat + c.param_count * kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const Shape& out = node.output_shapes.at(0);
  const OpAttrs& a = node.attrs;
  return fmt::format("conv2d_grad_input:b{}:c{}:h{}:w{}:f{}:k{}x{}:s{}x{}:p{}x{}:g{}", slice.batch.size(), out.at(0),
                     out.at(1), out.at(2), filters_of(node), a.kernel.h, a.kernel.w, a.stride.h, a.stride.w,
                     a.padding.h, a.padding.w, a.groups);
}

std::vector<ParamTensor> params(const OpNode& node) {
  const OpAttrs& a = node.attrs;
  std::vector<ParamTensor> tensors{{"W", {filters_of(node), in_per_group(node), a.kernel.h, a.kernel.w}, 0.0f}};
  if (a.bias) tensors.push_back({"b", {filters_of(node)}, 0.0f});
  return tensors;
}

Slice param_slice(const OpNode& node, const Slice& slice) {
  SPLITSCOPE_CHECK(slice.out.size() == node.output_shapes.at(0).at(0), node.name + " is computed whole or not at all");
  return Slice{slice.batch, {0, filters_of(node)}, {0, node.output_shapes.at(0).at(0)}};
}

/// Per sample and group: columns [patch × pixels] = W_gᵀ [patch × filters/g] · dZ_g [filters/g × pixels].
GemmDims gemm(const OpNode& node, const Slice& slice) {
  const Shape& dz = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  return GemmDims{in_per_group(node) * a.kernel.h * a.kernel.w, dz.at(1) * dz.at(2), filters_of(node) / a.groups,
                  slice.batch.size() * a.groups};
}

/// Whole layers only: a slice of the filters would leave a partial input
/// gradient this kind cannot write yet.
Slice from_forward(const OpNode& node, const Slice& forward) {
  if (forward.out.size() != filters_of(node)) {
    throw InputError("--train", "",
                     "layer '" + node.layer_name + "' is split by filters, and the input gradient of a filter slice "
                     "is not built yet: train convolutional networks with single, data, horizontal or pipeline");
  }
  return Slice{forward.batch, {0, node.output_shapes.at(0).at(0)}, {0, filters_of(node)}};
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
    d.split.out = true;  // by its weights' rule; no partitioner slices a backward op yet
    d.cost = conv2d_grad_input_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = conv2d_grad_input_op::signature;
    d.from_forward = conv2d_grad_input_op::from_forward;
    d.gemm = conv2d_grad_input_op::gemm;
    d.params = conv2d_grad_input_op::params;
    d.param_slice = conv2d_grad_input_op::param_slice;
    return d;
  }();
  return def;
}

}  // namespace splitscope
