#pragma once
/// \file
/// `tensor` on a transformer (Megatron-LM's pattern), over t devices:
///   1. each attention block splits by heads: device i holds heads
///      i·h/t .. (i+1)·h/t-1, so the QKV projection is column-split along
///      those heads' features in each of Q, K and V (a strided cut,
///      ir/feature_cut.hpp), the attention runs on its heads alone (causal
///      mask unchanged), and the output projection is row-split over the
///      same features: partial sums, one all-reduce;
///   2. each MLP (linear, gelu, linear) splits as a dense pair: the first
///      by its units, the gelu on them, the second by rows: one all-reduce;
///   3. the output layer (lm_head: a linear op writing the network's output)
///      splits by its units, the vocabulary: device i holds columns
///      i·V/t .. (i+1)·V/t-1 of W [H, V] (uneven shards where t does not
///      divide V, the first V mod t devices one column more) and writes those
///      logits; the network's output stays as these shards, one per device,
///      as data parallelism leaves its rows where they were computed;
///   4. what feeds a split op (embeddings, layer norms, residual adds, the
///      final layer norm) runs whole on every device, each on the all-reduced
///      sums it already holds, so no other data moves forward; what nothing
///      split follows (a residual stream that is the output) runs whole on
///      device 0;
///   5. with sequence parallelism (Korthikanti et al., 2022; Megatron-LM's
///      --sequence-parallel), the layer norms, residual adds and dropout
///      of step 4 run on a share of the positions instead of whole: device
///      i holds positions i·T/t .. (i+1)·T/t-1 of every sample (T divisible
///      by t), so the partial sums after a row-split projection are
///      reduce-scattered along the sequence (each device gets the sum of
///      its positions) and the input of the next column-split projection
///      is all-gathered; in backward, the reverse (an all-gather of the
///      output gradient before a row-split projection, a reduce-scatter of
///      the input gradient of a column-split one). Per block and pass: 2
///      all-gathers and 2 reduce-scatters of B·T·H floats where there were 2
///      all-reduces, the same bytes in a ring. The embeddings still run
///      whole on every device (their backward all-gathers the gradient of
///      their output), and each layer norm's weight gradient, a sum over
///      its share of the positions, is all-reduced before the update;
///   6. training: each backward op goes beside its forward op's slices (the
///      input gradient of a QKV column split is a partial sum: the matching
///      all-reduce, Megatron's f; the output projection's row split gives
///      each device its heads' gradient with no traffic, Megatron's g). The
///      loss goes with the output layer: each device differentiates its own
///      logits shard (the loss of a network ending in lm_head is mean squared
///      error, element-wise: no traffic), and lm_head's input gradient is a
///      partial sum over the shards: one all-reduce.

#include <map>
#include <vector>

#include "plan/plan_builder.hpp"

namespace splitscope {

/// Whether `graph` has an attention block for the head-wise split.
bool has_attention_blocks(const Graph& graph);

/// InputError unless `devices` divides every attention block's heads (the
/// message names the layer, its heads and the degrees that do).
void require_head_degree(const Graph& graph, int devices);

/// The feature cuts the split gives `node` (a split op or the backward op of
/// one), one per device; empty for an op that runs whole. What calibration
/// times of these slices (op_samples.hpp).
std::vector<FeatureCut> head_split_cuts(const Graph& graph, NodeId node, int devices);

/// InputError (naming --sequence-parallel) unless sequence parallelism
/// applies to `graph` over a tensor degree of `devices`: it has attention
/// blocks, and `devices` divides their sequence length.
void require_sequence_parallel(const Graph& graph, int devices);

/// Places every op of `graph` on devices 0 .. devices-1 as above (step 5
/// with `sequence_parallel`, which also turns on the builder's reduce-scatters).
void place_head_split(const Graph& graph, int devices, PlanBuilder& builder, bool sequence_parallel = false);

/// The split above for one op at a time, over any group of `devices`
/// consecutive devices and any micro-batch's rows: what `hybrid` runs in
/// each pipeline stage's tensor group (hybrid.hpp). Its cuts are computed
/// once for the graph.
class HeadSplitter {
 public:
  HeadSplitter(const Graph& graph, int devices, bool sequence_parallel = false);

  /// Places `node` (not a network input) for micro-batch `microbatch` over
  /// `rows` on devices first_device .. first_device+devices-1: its cut on
  /// each, whole on each, or whole on first_device alone.
  void place(NodeId node, int first_device, int microbatch, Range rows, PlanBuilder& builder) const;

 private:
  const Graph& graph_;
  int devices_;
  std::map<NodeId, std::vector<FeatureCut>> cuts_;
  std::vector<bool> replicated_;
  /// Forward ops that run on a share of the positions (step 5).
  std::vector<bool> sequence_split_;
  std::vector<Range> positions_;  ///< each device's share, with sequence parallelism
};

}  // namespace splitscope
