// channel_slice: channels [offset, offset + C) of its input, all of their
// inner elements: the gradient a concat hands each of its inputs. A copy:
// bytes only; a slice of its channels reads the same channels, shifted.
#include <fmt/format.h>

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
    d.signature = op_rules::elements_signature;
    d.device_calls = op_rules::one_device_call;
    d.rate_families = {"join"};
    return d;
  }();
  return def;
}

}  // namespace splitscope
