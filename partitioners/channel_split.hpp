#pragma once
/// \file
/// The vertical (intra-layer) split of one op at a time: weighted ops are cut
/// along their outputs (dense units, conv filters — along whole groups when
/// there are at least as many groups as devices — and cell hidden units),
/// channel-local ops follow their input's cut so no data moves, and ops that
/// need their whole input (softmax, stacking steps) run whole on device 0.

#include <string>
#include <utility>
#include <vector>

#include "plan/plan_builder.hpp"

namespace splitscope {

/// Where the slices of one op's output live: (output channels, device) pairs.
using Cut = std::vector<std::pair<Range, int>>;

/// The output ranges of a weighted op split over `devices`.
std::vector<Range> weighted_output_split(const Graph& graph, NodeId node, int devices);

/// Whether the backward ops of a training graph can follow a vertical split
/// over `devices` (every from_forward accepts its forward op's slices); a
/// forward graph always can.
bool backward_follows_split(const Graph& graph, int devices);

/// Most devices a vertical split can use on `graph`, and the layer that limits it.
std::pair<int, std::string> vertical_device_limit(const Graph& graph);

/// Splits over `devices` devices, 0 .. devices-1, unless told a group of as
/// many elsewhere (set_first_device(): a hybrid's pipeline stage), and one
/// micro-batch's rows (the whole batch by default). A cut that arrives from
/// another group (a stage boundary) is taken over position by position:
/// the slice the i-th device of that group held goes to the i-th of this one.
class ChannelSplitter {
 public:
  ChannelSplitter(const Graph& graph, int devices, PlanBuilder& builder);
  /// Micro-batch `microbatch`, over `rows` of the batch.
  ChannelSplitter(const Graph& graph, int devices, PlanBuilder& builder, int microbatch, Range rows);

  /// The next ops go to devices first .. first+devices-1; `first` is a
  /// multiple of the group size (0 to start with).
  void set_first_device(int first);

  /// Places `node` the vertical way (see the file comment).
  void place_vertical(NodeId node);
  /// Places `node` cut into `cut` (full reduction range in every slice).
  void place_cut(NodeId node, const Cut& cut);
  /// Places `node` whole on one device.
  void place_whole(NodeId node, int device);
  /// Places a dense `node` row-split: slice i sums over input channels
  /// `reduce[i].first` on device `reduce[i].second`, writing a partial sum.
  void place_row_split(NodeId node, const Cut& reduce);
  /// Places a backward `node` of a training graph: an op that reads or
  /// differentiates weights beside each slice of its forward op
  /// (OpDef::from_forward), so it uses the weights that slice holds; the
  /// others the vertical way.
  void place_backward(NodeId node);

  /// The cut of a placed node's output (one entry when it runs whole).
  const Cut& cut_of(NodeId node) const { return cuts_.at(node); }
  /// The cut a channel-local `node` inherits from its input.
  Cut following_cut(NodeId node) const;
  /// A concat's cut: each input's cut at that input's offset, where that
  /// leaves every device one range; else an even cut.
  Cut concatenated_cut(NodeId node) const;
  Cut stacked_input_cuts(NodeId node) const;
  /// The cut of an op whose channels are not its input's
  /// (OpDef::channels_from_input), from its input's.
  Cut mapped_cut(NodeId node, const Cut& source) const;

 private:
  /// `cut` on this group's devices (see the class comment).
  Cut homed(Cut cut) const;
  Slice full_rows_slice(NodeId node) const;

  const Graph& graph_;
  int devices_;
  PlanBuilder& builder_;
  int microbatch_ = 0;
  Range rows_;
  int first_device_ = 0;
  std::vector<Cut> cuts_;
  /// Every slice placed of each node, with its device.
  std::vector<std::vector<std::pair<Slice, int>>> placed_;
};

}  // namespace splitscope
