#include "ir/ops/op_rules.hpp"

#include <cmath>
#include <fmt/format.h>

namespace splitscope::op_rules {

int64_t output_bytes(const OpNode& node, const Slice& slice) {
  const Shape& shape = node.output_shapes.at(0);
  return slice.batch.size() * slice.out.size() * cut_inner_count(shape, output_features(node, slice)) * kFloat;
}

SliceCost channel_local_cost(const OpNode& node, const Slice& slice) {
  SliceCost cost;
  cost.bytes_written = output_bytes(node, slice);
  cost.bytes_read = slice.batch.size() * slice.out.size() *
                    cut_inner_count(node.input_shapes.at(0), input_features(node, slice, 0)) * kFloat;
  return cost;
}

Range all_channels(const OpNode& node, const Slice&, int slot) {
  return {0, node.input_shapes.at(static_cast<size_t>(slot)).at(0)};
}

Range same_channels(const OpNode&, const Slice& slice, int) { return slice.out; }

std::string elements_signature(const OpNode& node, const Slice& slice) {
  return fmt::format("{}:b{}:n{}", to_string(node.kind), slice.batch.size(),
                     slice.out.size() * cut_inner_count(node.output_shapes.at(0), output_features(node, slice)));
}

float weight_scale(int64_t fan_in, Activation activation) {
  const double gain = activation == Activation::kRelu ? 6.0 : 3.0;
  return static_cast<float>(std::sqrt(gain / static_cast<double>(fan_in)));
}

}  // namespace splitscope::op_rules

namespace splitscope::op_rules {

std::string pool_signature(const OpNode& node, const Slice& slice) {
  const Shape& in = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  std::string signature = fmt::format("{}:b{}:c{}:h{}:w{}:k{}x{}:s{}x{}", to_string(node.kind), slice.batch.size(),
                                      slice.out.size(), in.at(1), in.at(2), a.kernel.h, a.kernel.w, a.stride.h,
                                      a.stride.w);
  // Only padded pools name their padding, so calibration files written before pools had any still match.
  if (a.padding.h != 0 || a.padding.w != 0) signature += fmt::format(":p{}x{}", a.padding.h, a.padding.w);
  return signature;
}

int one_device_call(const SliceCalls&) { return 1; }

}  // namespace splitscope::op_rules
