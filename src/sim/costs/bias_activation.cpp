#include "sim/costs/bias_activation.hpp"

#include <algorithm>

namespace splitscope {

BiasActivation bias_activation_of(const OpNode& node, const Slice& slice) {
  BiasActivation pass;
  const Shape& out = node.output_shapes.at(0);
  // Per row: the slice's channels times the spatial size of one (1 for dense).
  int64_t per_channel = 1;
  for (size_t i = 1; i < out.size(); ++i) per_channel *= out[i];
  pass.channels = slice.out.size();
  pass.outputs = slice.batch.size() * pass.channels * per_channel;
  const bool partial = slice.is_partial(node);
  pass.bias = node.attrs.bias && slice.reduce.begin == 0;
  pass.activation = !partial && node.attrs.activation != Activation::kNone;
  return pass;
}

double bias_activation_seconds(const DeviceFacts& facts, const BiasActivation& pass) {
  if (!pass.any()) return 0.0;
  const double outputs = static_cast<double>(pass.outputs);
  const double flops = outputs * ((pass.bias ? 1 : 0) + (pass.activation ? 1 : 0));
  const double bias_bytes = pass.bias ? facts.element_bytes * static_cast<double>(pass.channels) : 0;
  const double bytes = 2 * facts.element_bytes * outputs + bias_bytes;
  return std::max(flops / facts.vector_flops_per_second, bytes / facts.dram_bytes_per_second) + facts.launch_seconds;
}

}  // namespace splitscope
