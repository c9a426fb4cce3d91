#include "partitioners/dense_pairs.hpp"

#include <set>

namespace splitscope {

std::vector<std::pair<NodeId, NodeId>> dense_pairs(const Graph& graph) {
  std::vector<std::pair<NodeId, NodeId>> pairs;
  std::set<NodeId> paired;
  for (NodeId id : graph.topological_order()) {
    if (graph.node(id).kind != OpKind::kDense || paired.count(id)) continue;
    NodeId at = id;
    while (true) {
      // Forward readers only: a training graph's backward ops read activations too.
      std::vector<std::pair<NodeId, int>> consumers;
      for (const auto& consumer : graph.consumers({at, 0})) {
        if (graph.node(consumer.first).pass == Pass::kForward) consumers.push_back(consumer);
      }
      if (consumers.size() != 1) break;
      const NodeId next = consumers.front().first;
      const OpKind kind = graph.node(next).kind;
      if (kind == OpKind::kDense) {
        if (!paired.count(next)) {
          pairs.emplace_back(id, next);
          paired.insert(id);
          paired.insert(next);
        }
        break;
      }
      if (!is_channel_local(kind) || kind == OpKind::kMaxPool || kind == OpKind::kAvgPool) break;
      at = next;
    }
  }
  return pairs;
}

}  // namespace splitscope
