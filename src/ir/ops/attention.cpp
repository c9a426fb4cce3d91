// attention: multi-head scaled dot-product attention over one sample's
// positions, softmax(Q·Kᵀ/√d + mask)·V per head, from [T, 3·H] (Q | K | V,
// attention_rules.hpp) to [T, H]. The projections before (Q, K, V) and after
// (the output) are dense layers. A product kind: 4·T²·H FLOPs a sample (two
// batched products per head), priced as heads × 2 GEMMs of T×T×d; bytes:
// reads Q, K, V once, writes the context (the T×T probabilities stay on chip,
// as a fused kernel keeps them). Sliced by samples and, for the tensor
// strategy, by heads (Slice::features: its heads' Q, K, V in, their context out).
#include <fmt/format.h>

#include "ir/gradient_builder.hpp"
#include "ir/layer_costs.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/attention_rules.hpp"
#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace attention_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  SliceCost c;
  c.flops = slice.batch.size() * attention_rules::forward_flops_per_sample(d);
  c.bytes_read = slice.batch.size() * d.positions * 3 * d.features * op_rules::kFloat;
  c.bytes_written = op_rules::output_bytes(node, slice);
  return c;
}

std::string signature(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  return fmt::format("attention:b{}:t{}:h{}:d{}{}", slice.batch.size(), d.positions, d.heads, d.head_features,
                     node.attrs.causal ? ":causal" : "");
}

/// Per sample and head: Q·Kᵀ (T×d by d×T) and P·V (T×T by T×d), both 2·T·T·d FLOPs.
GemmDims gemm(const OpNode& node, const Slice& slice) {
  const attention_rules::AttentionDims d = attention_rules::slice_dims(node, slice);
  return GemmDims{d.positions, d.positions, d.head_features, 2 * d.heads * slice.batch.size()};
}

void gradient(GradientBuilder& builder, NodeId node, const std::vector<std::optional<TensorRef>>& gradients) {
  const OpNode forward = builder.node(node);  // a copy: adding nodes moves the graph's nodes
  const TensorRef qkv = builder.input(node, 0);
  if (!builder.wants(qkv)) return;
  builder.contribute(qkv, TensorRef{builder.add(OpKind::kAttentionGrad, node, "grad", {qkv, *gradients.at(0)},
                                                forward.input_shapes.at(0), forward.attrs),
                                    0});
}

}  // namespace attention_op

namespace attention_layer {

void read(const NetworkFields& fields, Layer& layer) {
  layer.attrs.heads = fields.required_positive("heads", "the number of attention heads");
  layer.attrs.causal = fields.optional_bool("causal", false);
  const Shape& in = layer.input_shape;
  if (in.size() != 2 || in[1] % 3 != 0) {
    fields.fail("", "attention reads a sequence [positions, 3·features] (each position's Q, K and V end to end, "
                    "as a dense layer of 3·features units per position writes them), but gets " +
                        to_string(in));
  }
  if ((in[1] / 3) % layer.attrs.heads != 0) {
    fields.fail("heads", "the " + std::to_string(in[1] / 3) + " features are not divisible by heads = " +
                             std::to_string(layer.attrs.heads));
  }
  layer.output_shape = {in[0], in[1] / 3};
}

/// Scores Q·Kᵀ and context P·V: 2·T·T·d FLOPs each, per head (4·T²·H a sample).
int64_t flops(const Layer& layer, int64_t batch) {
  return count_product({4, layer.output_shape.at(0), layer.output_shape.at(0), layer.output_shape.at(1), batch});
}

const LayerDef& definition() {
  static const LayerDef def = [] {
    LayerDef d;
    d.name = "attention";
    d.fields = {"heads", "causal"};
    d.read = read;
    d.flops = flops;
    return d;
  }();
  return def;
}

}  // namespace attention_layer

const OpDef& attention_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kAttention;
    d.name = "attention";
    d.cost_class = CostClass::kMatrix;
    d.cost = attention_op::cost;
    d.input_channels = op_rules::all_channels;
    d.signature = attention_op::signature;
    d.input_features = [](const OpNode&, const Slice& slice, int) { return attention_rules::qkv_features(slice); };
    d.output_features = [](const OpNode&, const Slice& slice) { return attention_rules::context_features(slice); };
    d.gemm = attention_op::gemm;
    d.gradient = attention_op::gradient;
    // Scores, softmax (with the mask), context: three kernels, as an unfused PyTorch runs it.
    d.device_calls = [](const SliceCalls&) { return 3; };
    d.layer = &attention_layer::definition();
    return d;
  }();
  return def;
}

}  // namespace splitscope
