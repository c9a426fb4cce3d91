#include "ir/ops/attention_rules.hpp"

namespace splitscope::attention_rules {

AttentionDims dims(const OpNode& node) {
  const bool backward = node.kind == OpKind::kAttentionGrad;
  const Shape& context = backward ? node.input_shapes.at(1) : node.output_shapes.at(0);
  AttentionDims d;
  d.positions = context.at(0);
  d.features = context.at(1);
  d.heads = node.attrs.heads;
  d.head_features = d.features / d.heads;
  return d;
}

AttentionDims slice_dims(const OpNode& node, const Slice& slice) {
  AttentionDims d = dims(node);
  if (slice.features.whole()) return d;
  d.features = slice.features.range.size();
  d.heads = d.features / d.head_features;
  return d;
}

FeatureCut qkv_features(const Slice& slice) {
  if (slice.features.whole()) return {};
  return FeatureCut{slice.features.range, 3, false};
}

FeatureCut context_features(const Slice& slice) {
  if (slice.features.whole()) return {};
  return FeatureCut{slice.features.range, 1, false};
}

int64_t forward_flops_per_sample(const AttentionDims& d) { return 4 * d.positions * d.positions * d.features; }

}  // namespace splitscope::attention_rules
