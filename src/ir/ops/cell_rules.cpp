#include "ir/ops/cell_rules.hpp"

#include <cmath>
#include <fmt/format.h>

#include "ir/ops/op_rules.hpp"

namespace splitscope::cell_rules {

using op_rules::kFloat;

SliceCost cost(const OpNode& node, const Slice& slice, int64_t gates, bool has_cell_state) {
  const int64_t rows = slice.batch.size();
  const int64_t units = slice.out.size();
  const int64_t input = node.input_shapes.at(kCellInputSlot).at(0);
  const int64_t hidden = node.attrs.hidden;
  SliceCost c;
  c.flops = 2 * gates * units * (input + hidden) * rows;
  c.param_count = gates * units * (input + hidden) + (node.attrs.bias ? gates * units : 0);
  const bool has_state = node.step > 0;
  c.bytes_read = rows * input * kFloat + c.param_count * kFloat + (has_state ? rows * hidden * kFloat : 0) +
                 (has_state && has_cell_state ? rows * units * kFloat : 0);
  c.bytes_written = rows * units * kFloat * (has_cell_state ? 2 : 1);
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int slot) {
  return slot == kCellStateSlot ? slice.out : op_rules::all_channels(node, slice, slot);
}

std::string signature(const OpNode& node, const Slice& slice) {
  return fmt::format("{}:b{}:i{}:h{}:u{}:t{}", to_string(node.kind), slice.batch.size(),
                     node.input_shapes.at(kCellInputSlot).at(0), node.attrs.hidden, slice.out.size(),
                     node.step > 0 ? 1 : 0);
}

std::vector<ParamTensor> params(const OpNode& node, int64_t gates) {
  const int64_t hidden = node.attrs.hidden;
  const int64_t input = node.input_shapes.at(kCellInputSlot).at(0);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden)));
  std::vector<ParamTensor> tensors{{"Wx", {input, gates * hidden}, scale}, {"Wh", {hidden, gates * hidden}, scale}};
  if (node.attrs.bias) tensors.push_back({"b", {gates * hidden}, scale});
  return tensors;
}

}  // namespace splitscope::cell_rules
