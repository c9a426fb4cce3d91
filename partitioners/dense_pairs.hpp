#pragma once
/// \file
/// Megatron's dense pairs: consecutive dense layers that `tensor` (and
/// `hybrid`) split column-then-row, so the pair needs one all-reduce.

#include <utility>
#include <vector>

#include "ir/graph.hpp"

namespace splitscope {

/// Dense pairs (first, second) where the first's output reaches the second
/// only through channel-local ops (activations), each op in one pair at most.
std::vector<std::pair<NodeId, NodeId>> dense_pairs(const Graph& graph);

}  // namespace splitscope
