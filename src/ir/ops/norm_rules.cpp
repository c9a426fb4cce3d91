#include "ir/ops/norm_rules.hpp"

namespace splitscope::norm_rules {

std::vector<ParamTensor> gain_and_shift(int64_t width) {
  return {ParamTensor{"gamma", {width}, 0.1f, 1.0f}, ParamTensor{"beta", {width}, 0.1f, 0.0f}};
}

Range channel_params(const OpNode&, const Slice& slice, int) { return slice.out; }

Range feature_params(const OpNode& node, const Slice&, int) { return {0, features(node)}; }

int64_t channel_inner(const OpNode& node) { return inner_count(node.output_shapes.at(0)); }

int64_t features(const OpNode& node) { return node.output_shapes.at(0).back(); }

int gradient_calls(const SliceCalls& calls) { return calls.adds_running_sum ? 2 : 1; }

}  // namespace splitscope::norm_rules
