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
#include "ir/ops/attention_rules.hpp"
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
    return d;
  }();
  return def;
}

}  // namespace splitscope
