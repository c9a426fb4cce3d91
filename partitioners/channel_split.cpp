#include "partitioners/channel_split.hpp"

#include <map>

#include <limits>
#include <set>

#include "ir/ops/concat_rules.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {

std::vector<Range> weighted_output_split(const Graph& graph, NodeId id, int devices) {
  const OpNode& node = graph.node(id);
  const int64_t outputs = node.output_shapes.at(0).at(0);
  if (node.kind == OpKind::kConv2d) {
    const int64_t groups = node.attrs.groups;
    // Along whole groups where possible: a grouped layer then needs only the
    // input channels its own device already holds (the AlexNet split).
    if (groups >= devices) return split_aligned(outputs, devices, outputs / groups);
  }
  return split_evenly(outputs, devices);
}

namespace {

/// The slices of backward `node` beside `forward_slices`, by its from_forward.
/// Its partial sums are all-reduced together, so either every slice is one
/// or none is: where some are complete for their part of the output (a
/// convolution's slices that are whole groups) and others partial sums of
/// all of it, the complete ones are widened to partial sums of the whole
/// output (zero outside their part), and one all-reduce sums them all.
std::vector<Slice> backward_slices(const OpNode& node, const std::vector<Slice>& forward_slices) {
  std::vector<Slice> slices;
  size_t partials = 0;
  for (const Slice& forward : forward_slices) {
    slices.push_back(op_def(node.kind).from_forward(node, forward));
    partials += slices.back().is_partial(node) ? 1 : 0;
  }
  if (partials != 0 && partials != slices.size()) {
    for (Slice& slice : slices) {
      slice.out = {0, node.output_shapes.at(0).at(0)};
      SPLITSCOPE_CHECK(slice.is_partial(node), node.name + ": a widened slice that is not a partial sum");
    }
  }
  return slices;
}

}  // namespace

bool backward_follows_split(const Graph& graph, int devices) {
  if (!graph.is_training()) return true;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (node.pass != Pass::kBackward || op_def(node.kind).from_forward == nullptr) continue;
    const auto forward = static_cast<NodeId>(node.forward);
    if (!is_weighted(graph.node(forward).kind)) continue;
    std::vector<Slice> forward_slices;
    for (const Range& range : weighted_output_split(graph, forward, devices)) {
      forward_slices.push_back(full_slice(graph.node(forward), {0, graph.batch()}));
      forward_slices.back().out = range;
    }
    try {
      (void)backward_slices(node, forward_slices);
    } catch (const InputError&) {
      return false;
    }
  }
  return true;
}

std::pair<int, std::string> vertical_device_limit(const Graph& graph) {
  int limit = std::numeric_limits<int>::max();
  std::string limiter;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    // Backward ops follow their forward op's slices: only forward ops limit the split.
    if (!is_weighted(node.kind) || node.pass != Pass::kForward) continue;
    const int64_t outputs = node.output_shapes.at(0).at(0);
    if (outputs < limit) {
      limit = static_cast<int>(std::min<int64_t>(outputs, std::numeric_limits<int>::max()));
      limiter = node.layer_name;
    }
  }
  return {limit, limiter};
}

ChannelSplitter::ChannelSplitter(const Graph& graph, int devices, PlanBuilder& builder)
    : ChannelSplitter(graph, devices, builder, 0, Range{0, graph.batch()}) {}

ChannelSplitter::ChannelSplitter(const Graph& graph, int devices, PlanBuilder& builder, int microbatch, Range rows)
    : graph_(graph),
      devices_(devices),
      builder_(builder),
      microbatch_(microbatch),
      rows_(rows),
      cuts_(graph.num_nodes()),
      placed_(graph.num_nodes()) {}

void ChannelSplitter::set_first_device(int first) {
  SPLITSCOPE_CHECK(first >= 0 && first % devices_ == 0, "a device group that does not start at a multiple of its size");
  first_device_ = first;
}

Cut ChannelSplitter::homed(Cut cut) const {
  for (auto& piece : cut) piece.second = first_device_ + piece.second % devices_;
  return cut;
}

Slice ChannelSplitter::full_rows_slice(NodeId id) const { return full_slice(graph_.node(id), rows_); }

void ChannelSplitter::place_vertical(NodeId id) {
  const OpNode& node = graph_.node(id);
  if (is_weighted(node.kind)) {
    Cut cut;
    const auto ranges = weighted_output_split(graph_, id, devices_);
    for (size_t d = 0; d < ranges.size(); ++d) cut.emplace_back(ranges[d], first_device_ + static_cast<int>(d));
    place_cut(id, cut);
  } else if (is_channel_local(node.kind)) {
    place_cut(id, following_cut(id));
  } else if (node.kind == OpKind::kConcat) {
    place_cut(id, concatenated_cut(id));
  } else {
    place_whole(id, first_device_);
  }
}

Cut ChannelSplitter::following_cut(NodeId id) const {
  const auto inputs = graph_.inputs(id);
  SPLITSCOPE_CHECK(!inputs.empty() && inputs[0].has_value(), "a channel-local op without an input");
  const NodeId source = inputs[0]->node;
  const int64_t outputs = graph_.node(id).output_shapes.at(0).at(0);
  if (graph_.node(source).kind == OpKind::kInput) return {{{0, outputs}, first_device_}};
  const Cut source_cut = homed(cuts_.at(source));
  if (op_def(graph_.node(id).kind).channels_from_input == nullptr) return source_cut;  // the same channels
  return mapped_cut(id, source_cut);
}

// Each input keeps the devices it was cut over: the concat's channels from
// input k sit at its offset, on the device that computed them, so the join
// moves no data. A device's slices of one tensor must be one range (a
// collective gathers one slice per device), so where that would give a
// device two pieces the concat is cut evenly instead, and its inputs move.
Cut ChannelSplitter::concatenated_cut(NodeId id) const {
  Cut cut = stacked_input_cuts(id);
  std::set<int> seen;
  for (const auto& [range, device] : cut) {
    if (seen.insert(device).second) continue;
    Cut even;
    const auto ranges = split_evenly(graph_.node(id).output_shapes.at(0).at(0), devices_);
    for (size_t d = 0; d < ranges.size(); ++d) even.emplace_back(ranges[d], first_device_ + static_cast<int>(d));
    return even;
  }
  return cut;
}

Cut ChannelSplitter::stacked_input_cuts(NodeId id) const {
  const OpNode& node = graph_.node(id);
  const auto inputs = graph_.inputs(id);
  Cut cut;
  for (size_t slot = 0; slot < inputs.size(); ++slot) {
    const int64_t offset = concat_offset(node, static_cast<int>(slot));
    const NodeId source = inputs[slot]->node;
    const Cut source_cut = homed(cuts_.at(source));
    if (graph_.node(source).kind == OpKind::kInput || source_cut.empty()) {
      cut.emplace_back(Range{offset, offset + node.input_shapes[slot].at(0)}, first_device_);
      continue;
    }
    for (const auto& [range, device] : source_cut) {
      const Range shifted{offset + range.begin, offset + range.end};
      // Neighbouring pieces on one device are one slice.
      if (!cut.empty() && cut.back().second == device && cut.back().first.end == shifted.begin) {
        cut.back().first.end = shifted.end;
      } else {
        cut.emplace_back(shifted, device);
      }
    }
  }
  return cut;
}

// An op whose channels are not its input's (OpDef::channels_from_input: a
// reshape, a concat's channel slice) keeps the pieces of its input's cut that
// map onto its channels. Where a piece maps onto no range of its output, or a
// device would hold two pieces (a collective gathers one slice per device),
// it runs whole.
Cut ChannelSplitter::mapped_cut(NodeId id, const Cut& source) const {
  const OpNode& node = graph_.node(id);
  const auto channels_from_input = op_def(node.kind).channels_from_input;
  const Cut whole{{{0, node.output_shapes.at(0).at(0)}, first_device_}};
  Cut cut;
  for (const auto& [range, device] : source) {
    const std::optional<Range> mapped = channels_from_input(node, range);
    if (!mapped.has_value()) return whole;
    if (mapped->begin < mapped->end) cut.emplace_back(*mapped, device);
  }
  std::set<int> devices;
  for (const auto& piece : cut) {
    if (!devices.insert(piece.second).second) return whole;  // one range per device
  }
  return cut.empty() ? whole : cut;
}

void ChannelSplitter::place_cut(NodeId id, const Cut& cut) {
  for (const auto& [range, device] : cut) {
    Slice slice = full_rows_slice(id);
    slice.out = range;
    builder_.place(id, microbatch_, slice, device);
    placed_[id].emplace_back(slice, device);
  }
  cuts_[id] = cut;
}

void ChannelSplitter::place_whole(NodeId id, int device) {
  const OpNode& node = graph_.node(id);
  builder_.place(id, microbatch_, full_rows_slice(id), device);
  placed_[id].emplace_back(full_rows_slice(id), device);
  cuts_[id] = {{{0, node.output_shapes.at(0).at(0)}, device}};
}

void ChannelSplitter::place_backward(NodeId id) {
  const OpNode& node = graph_.node(id);
  if (op_def(node.kind).from_forward == nullptr) {
    place_vertical(id);
    return;
  }
  const auto& forward_placed = placed_.at(static_cast<NodeId>(node.forward));
  std::vector<Slice> forward_slices;
  for (const auto& placed : forward_placed) forward_slices.push_back(placed.first);
  const std::vector<Slice> slices = backward_slices(node, forward_slices);
  std::map<int, Range> out_of;  // the output each device computes
  bool whole_everywhere = false;
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice& slice = slices[i];
    const int device = forward_placed[i].second;
    builder_.place(id, microbatch_, slice, device);
    placed_[id].emplace_back(slice, device);
    whole_everywhere = whole_everywhere || slice.is_partial(node);
    out_of.emplace(device, slice.out);
  }
  Cut cut;
  for (const auto& [device, range] : out_of) cut.emplace_back(range, device);
  const Range all{0, node.output_shapes.at(0).at(0)};
  if (whole_everywhere) {
    // Partial sums are all-reduced, so every device that wrote one holds the
    // sum: its readers (the activation gradient of the layer below) follow
    // the cut of the tensor it is the gradient of, each on its own slice,
    // rather than all running on device 0 and sending the slices back out.
    cuts_[id] = {{all, first_device_}};
    const auto forward_inputs = graph_.inputs(static_cast<NodeId>(node.forward));
    const auto slot = static_cast<size_t>(op_def(node.kind).input_gradient_slot);
    if (slot < forward_inputs.size() && forward_inputs[slot].has_value()) {
      const TensorRef source = *forward_inputs[slot];
      const Cut& below = cuts_.at(source.node);
      bool held = !below.empty();
      for (const auto& [range, device] : below) held = held && out_of.count(device) > 0;
      const Shape& shape = graph_.node(source.node).output_shapes.at(static_cast<size_t>(source.output));
      if (held && shape.at(0) == all.end) cuts_[id] = below;
    }
    return;
  }
  cuts_[id] = cut.empty() ? Cut{{all, first_device_}} : cut;
}

void ChannelSplitter::place_row_split(NodeId id, const Cut& reduce) {
  const OpNode& node = graph_.node(id);
  SPLITSCOPE_CHECK(node.kind == OpKind::kDense, "only dense ops are row-split");
  for (const auto& [range, device] : reduce) {
    Slice slice = full_rows_slice(id);
    slice.reduce = range;
    builder_.place(id, microbatch_, slice, device);
    placed_[id].emplace_back(slice, device);
  }
  // Every device ends up with the whole (all-reduced) output; consumers that
  // run whole read it on the group's first device.
  cuts_[id] = {{{0, node.output_shapes.at(0).at(0)}, first_device_}};
}

}  // namespace splitscope
