#include "partitioners/head_split.hpp"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "partitioners/transformer_blocks.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// The feature cut of each split forward op, one per device.
using HeadCuts = std::map<NodeId, std::vector<FeatureCut>>;

FeatureCut head_cut(Range range, int blocks, bool rows) { return FeatureCut{range, blocks, rows}; }

/// Pass 1: the cuts of the attention blocks (by heads) and the linear pairs (by units).
HeadCuts head_cuts(const Graph& graph, int devices) {
  HeadCuts cuts;
  if (devices == 1) return cuts;  // one device runs every op whole
  for (const AttentionBlock& block : attention_blocks(graph)) {
    const int64_t features = graph.node(block.attention).output_shapes.at(0).at(1);
    for (const Range& range : split_evenly(features, devices)) {
      cuts[block.qkv].push_back(head_cut(range, 3, false));
      cuts[block.attention].push_back(head_cut(range, 1, false));
      cuts[block.proj].push_back(head_cut(range, 1, true));
    }
  }
  for (const LinearPair& pair : linear_pairs(graph)) {
    const int64_t units = graph.node(pair.first).output_shapes.at(0).at(1);
    for (const Range& range : split_evenly(units, devices)) {
      cuts[pair.first].push_back(head_cut(range, 1, false));
      for (NodeId between : pair.between) cuts[between].push_back(head_cut(range, 1, false));
      cuts[pair.second].push_back(head_cut(range, 1, true));
    }
  }
  // The output layer by vocabulary (its units: a column split, Megatron's
  // vocabulary-parallel head), uneven where t does not divide the vocabulary;
  // the loss and the head's backward ops follow it (forward_of).
  if (const int64_t head = vocabulary_head(graph); head >= 0) {
    const auto id = static_cast<NodeId>(head);
    const int64_t vocabulary = graph.node(id).output_shapes.at(0).at(1);
    if (vocabulary >= devices) {
      for (const Range& range : split_evenly(vocabulary, devices)) cuts[id].push_back(head_cut(range, 1, false));
    }
  }
  return cuts;
}

/// Pass 2: the forward ops that feed a split op, which every device runs
/// whole (a residual stream each device holds entire).
std::vector<bool> replicated_forward(const Graph& graph, const HeadCuts& cuts) {
  std::vector<bool> feeds(graph.num_nodes(), false);
  const std::vector<NodeId> order = graph.topological_order();
  for (auto at = order.rbegin(); at != order.rend(); ++at) {
    const NodeId id = *at;
    if (graph.node(id).pass != Pass::kForward) continue;
    if (!cuts.count(id) && !feeds[id]) continue;
    for (const auto& input : graph.inputs(id)) {
      if (input && !cuts.count(input->node)) feeds[input->node] = true;
    }
  }
  return feeds;
}

/// The forward op a node goes with: itself, or the one a backward op differentiates.
NodeId forward_of(const OpNode& node, NodeId id) {
  return node.pass == Pass::kBackward && node.forward >= 0 ? static_cast<NodeId>(node.forward) : id;
}

bool attention_blocks_divide(const Graph& graph, int devices) {
  for (const AttentionBlock& block : attention_blocks(graph)) {
    if (graph.node(block.attention).attrs.heads % devices != 0) return false;
  }
  return true;
}

}  // namespace

bool has_attention_blocks(const Graph& graph) { return !attention_blocks(graph).empty(); }

void require_head_degree(const Graph& graph, int devices) {
  if (devices < 1) return;  // require_devices() says what is wrong with that
  for (const AttentionBlock& block : attention_blocks(graph)) {
    const OpNode& attention = graph.node(block.attention);
    if (attention.attrs.heads % devices == 0) continue;
    std::string valid;
    for (int degree : head_degrees(graph)) valid += (valid.empty() ? "" : ", ") + std::to_string(degree);
    throw InputError("--devices", "",
                     "tensor splits attention by heads, and layer " + attention.name + " has " +
                         std::to_string(attention.attrs.heads) + " heads, which " + std::to_string(devices) +
                         " devices do not divide; use --devices " + valid);
  }
}

std::vector<FeatureCut> head_split_cuts(const Graph& graph, NodeId node, int devices) {
  if (devices < 1 || !attention_blocks_divide(graph, devices)) return {};
  const HeadCuts cuts = head_cuts(graph, devices);
  const auto cut = cuts.find(forward_of(graph.node(node), node));
  return cut == cuts.end() ? std::vector<FeatureCut>{} : cut->second;
}

void require_sequence_parallel(const Graph& graph, int devices) {
  const std::vector<AttentionBlock> blocks = attention_blocks(graph);
  if (blocks.empty()) {
    throw InputError("--sequence-parallel", "",
                     graph.name() + " has no attention blocks: sequence parallelism splits the layer norms between a "
                                    "transformer's tensor-parallel pairs along the sequence; drop it");
  }
  const int64_t positions = graph.node(blocks.front().attention).output_shapes.at(0).at(0);
  if (devices > 0 && positions % devices != 0) {
    throw InputError("--sequence-parallel", "",
                     fmt::format("splits the sequence of {} ({} positions) over the {} devices of a tensor group, "
                                 "which do not divide it; use a tensor degree that divides {}",
                                 graph.name(), positions, devices, positions));
  }
}

void place_head_split(const Graph& graph, int devices, PlanBuilder& builder, bool sequence_parallel) {
  const HeadSplitter splitter(graph, devices, sequence_parallel);
  if (sequence_parallel && devices > 1) builder.reduce_scatter_partial_sums();
  const Range all_rows{0, graph.batch()};
  for (NodeId id : graph.wavefront_order()) {
    if (graph.node(id).kind != OpKind::kInput) splitter.place(id, 0, 0, all_rows, builder);
  }
}

HeadSplitter::HeadSplitter(const Graph& graph, int devices, bool sequence_parallel)
    : graph_(graph),
      devices_(devices),
      cuts_(head_cuts(graph, devices)),
      replicated_(replicated_forward(graph, cuts_)),
      sequence_split_(graph.num_nodes(), false) {
  if (!sequence_parallel || devices < 2) return;
  require_sequence_parallel(graph, devices);
  const int64_t positions = graph.node(attention_blocks(graph).front().attention).output_shapes.at(0).at(0);
  positions_ = split_evenly(positions, devices);
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    const NodeId forward = forward_of(node, id);
    if (!replicated_[forward] || node.output_shapes.at(0).size() < 2) continue;
    if (node.output_shapes.at(0).at(0) != positions) continue;
    // Position by position: the element-wise ops (residual adds, dropout)
    // and layer norm, which normalizes each position alone. The embeddings
    // stay whole: a share of them would all-reduce their table's gradient;
    // but the sum of the gradients of their output is a share, as the
    // residual stream's, so one all-gather brings it whole.
    const bool position_local = op_def(node.kind).channel_local || node.kind == OpKind::kLayerNorm;
    if (node.pass == Pass::kForward || (position_local && !sequence_split_[forward])) {
      sequence_split_[id] = position_local;
    }
  }
}

void HeadSplitter::place(NodeId id, int first_device, int microbatch, Range rows, PlanBuilder& builder) const {
  const OpNode& node = graph_.node(id);
  const NodeId forward = forward_of(node, id);
  const auto cut = cuts_.find(forward);
  if (cut != cuts_.end()) {
    // Pass 3: a split op (or its backward) runs its cut on each device.
    for (int device = 0; device < devices_; ++device) {
      Slice slice = full_slice(node, rows);
      slice.features = cut->second.at(static_cast<size_t>(device));
      builder.place(id, microbatch, slice, first_device + device);
    }
  } else if (sequence_split_[forward] || sequence_split_[id]) {
    for (int device = 0; device < devices_; ++device) {
      Slice slice = full_slice(node, rows);
      slice.out = positions_.at(static_cast<size_t>(device));
      builder.place(id, microbatch, slice, first_device + device);
    }
  } else if (replicated_[forward]) {
    for (int device = 0; device < devices_; ++device) {
      builder.place(id, microbatch, full_slice(node, rows), first_device + device);
    }
  } else {
    builder.place(id, microbatch, full_slice(node, rows), first_device);
  }
}

}  // namespace splitscope
