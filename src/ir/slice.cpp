#include "ir/slice.hpp"

#include "util/check.hpp"

namespace splitscope {

bool Slice::is_partial(const OpNode& node) const {
  const OpDef& def = op_def(node.kind);
  // A feature-cut product (the head-wise split) says itself which of its slices sum.
  if (!features.whole()) return def.partial != nullptr && def.partial(node, *this);
  if (!def.split.reduce) return false;
  if (def.partial != nullptr) return def.partial(node, *this);
  return reduce.size() != node.input_shapes.at(0).at(0);
}

namespace {

/// A kind without its own rule: a channel-local op (gelu) reads and writes
/// the features it is given; the others work on whole features.
FeatureCut same_features_if_local(const OpNode& node, const Slice& slice) {
  return op_def(node.kind).channel_local ? slice.features : FeatureCut{};
}

}  // namespace

FeatureCut input_features(const OpNode& node, const Slice& slice, int slot) {
  if (slice.features.whole()) return {};
  const OpDef& def = op_def(node.kind);
  if (def.input_features != nullptr) return def.input_features(node, slice, slot);
  return same_features_if_local(node, slice);
}

FeatureCut output_features(const OpNode& node, const Slice& slice) {
  if (slice.features.whole()) return {};
  const OpDef& def = op_def(node.kind);
  if (def.output_features != nullptr) return def.output_features(node, slice);
  return same_features_if_local(node, slice);
}

int64_t cut_inner_count(const Shape& shape, const FeatureCut& cut) {
  if (cut.whole() || shape.size() < 2) return inner_count(shape);
  return inner_count(shape) / shape.back() * cut.count(shape.back());
}

double feature_fraction(const FeatureCut& cut, const Shape& shape) {
  if (cut.whole() || shape.empty()) return 1.0;
  const int64_t axis = shape.back();
  return static_cast<double>(cut.count(axis)) / static_cast<double>(axis);
}

Slice full_slice(const OpNode& node, Range batch) {
  Slice slice;
  slice.batch = batch;
  slice.out = {0, node.output_shapes.at(0).at(0)};
  slice.reduce = {0, node.input_shapes.empty() ? 0 : node.input_shapes.at(0).at(0)};
  return slice;
}

SliceCost slice_cost(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  SPLITSCOPE_CHECK(slice.out.begin >= 0 && slice.out.end <= node.output_shapes.at(0).at(0),
                   "slice outside the output of " + node.name);
  return op_def(node.kind).cost(node, slice);
}

}  // namespace splitscope
