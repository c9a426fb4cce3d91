#pragma once
/// \file
/// The parts of a transformer that `tensor` splits Megatron's way: each
/// attention op with its QKV projection before it and its output projection
/// after it, each MLP (linear, gelu, linear), and the output layer to the
/// vocabulary, found by the shape of the graph rather than by layer names.

#include <vector>

#include "ir/graph.hpp"

namespace splitscope {

/// One attention block: qkv (a linear op whose [T, 3·H] output only the
/// attention reads), the attention, and proj (the one linear op reading the
/// attention's context).
struct AttentionBlock {
  NodeId qkv = 0;
  NodeId attention = 0;
  NodeId proj = 0;
};

/// One MLP: `first` (a linear op), the channel-local ops between (gelu), and
/// `second` (the linear op they alone feed).
struct LinearPair {
  NodeId first = 0;
  std::vector<NodeId> between;
  NodeId second = 0;
};

/// The forward graph's attention blocks, in topological order.
std::vector<AttentionBlock> attention_blocks(const Graph& graph);
/// Its linear pairs outside the attention blocks, in topological order.
std::vector<LinearPair> linear_pairs(const Graph& graph);

/// The output layer Megatron splits by vocabulary: the linear op writing the
/// network's output (lm_head, an MLM head) when it is in no block or pair
/// above; -1 for a network whose output is anything else.
int64_t vocabulary_head(const Graph& graph);

/// The tensor degrees that divide every attention block's heads (the
/// degrees `tensor` can split `graph` by), ascending.
std::vector<int> head_degrees(const Graph& graph);

}  // namespace splitscope
