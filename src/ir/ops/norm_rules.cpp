#include "ir/ops/norm_rules.hpp"

#include "ir/slice.hpp"

namespace splitscope::norm_rules {

std::vector<ParamTensor> gain_and_shift(int64_t width) {
  return {ParamTensor{"gamma", {width}, 0.1f, 1.0f}, ParamTensor{"beta", {width}, 0.1f, 0.0f}};
}

Range channel_params(const OpNode&, const Slice& slice, int) { return slice.out; }

Range feature_params(const OpNode& node, const Slice&, int) { return {0, features(node)}; }

Range position_channels(const OpNode& node, const Slice& slice, int slot) {
  const Shape& shape = node.input_shapes.at(static_cast<size_t>(slot));
  if (shape.size() < 2) return {0, shape.at(0)};
  return slice.out;
}

Slice whole_positions(const OpNode& node, const Slice& slice) {
  Slice whole = slice;
  whole.out = {0, node.output_shapes.at(0).at(0)};
  return whole;
}

int64_t channel_inner(const OpNode& node) { return inner_count(node.output_shapes.at(0)); }

int64_t features(const OpNode& node) { return node.output_shapes.at(0).back(); }

int gradient_calls(const SliceCalls& calls) { return calls.adds_running_sum ? 2 : 1; }

}  // namespace splitscope::norm_rules
