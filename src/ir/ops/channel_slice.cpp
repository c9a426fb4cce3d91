// channel_slice: channels [offset, offset + C) of its input, all of their
// inner elements: the gradient a concat hands each of its inputs. A copy:
// bytes only; a slice of its channels reads the same channels, shifted.
#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/op_rules.hpp"

namespace splitscope {
namespace channel_slice_op {

SliceCost cost(const OpNode& node, const Slice& slice) {
  SliceCost c;
  c.bytes_written = op_rules::output_bytes(node, slice);
  c.bytes_read = c.bytes_written;
  return c;
}

Range input_channels(const OpNode& node, const Slice& slice, int) {
  return {node.attrs.offset + slice.out.begin, node.attrs.offset + slice.out.end};
}

/// Its input's channels inside [offset, offset + C), shifted to start at 0.
std::optional<Range> channels_from_input(const OpNode& node, Range input) {
  const int64_t offset = node.attrs.offset;
  const int64_t outputs = node.output_shapes.at(0).at(0);
  const int64_t begin = std::max(input.begin, offset) - offset;
  const int64_t end = std::min(input.end, offset + outputs) - offset;
  return begin < end ? Range{begin, end} : Range{0, 0};
}

}  // namespace channel_slice_op

const OpDef& channel_slice_def() {
  static const OpDef def = [] {
    OpDef d;
    d.kind = OpKind::kChannelSlice;
    d.name = "channel_slice";
    d.efficiency_like = "concat";
    d.channel_local = true;
    d.split.out = true;
    d.cost = channel_slice_op::cost;
    d.input_channels = channel_slice_op::input_channels;
    d.channels_from_input = channel_slice_op::channels_from_input;
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"join"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
