#include "partitioners/transformer_blocks.hpp"

#include <set>

namespace splitscope {
namespace {

/// The one forward op reading output 0 of `node`, or -1 (several, or none).
int64_t sole_forward_reader(const Graph& graph, NodeId node) {
  int64_t reader = -1;
  for (const auto& consumer : graph.consumers({node, 0})) {
    if (graph.node(consumer.first).pass != Pass::kForward) continue;  // training graphs' backward readers
    if (reader >= 0) return -1;
    reader = static_cast<int64_t>(consumer.first);
  }
  return reader;
}

}  // namespace

std::vector<AttentionBlock> attention_blocks(const Graph& graph) {
  std::vector<AttentionBlock> blocks;
  for (NodeId id : graph.topological_order()) {
    const OpNode& node = graph.node(id);
    if (node.kind != OpKind::kAttention || node.pass != Pass::kForward) continue;
    const auto source = graph.inputs(id).at(0);
    if (!source || graph.node(source->node).kind != OpKind::kLinear) continue;
    if (sole_forward_reader(graph, source->node) != static_cast<int64_t>(id)) continue;
    const int64_t proj = sole_forward_reader(graph, id);
    if (proj < 0 || graph.node(static_cast<NodeId>(proj)).kind != OpKind::kLinear) continue;
    blocks.push_back({source->node, id, static_cast<NodeId>(proj)});
  }
  return blocks;
}

std::vector<LinearPair> linear_pairs(const Graph& graph) {
  std::set<NodeId> taken;
  for (const AttentionBlock& block : attention_blocks(graph)) taken.insert({block.qkv, block.proj});
  std::vector<LinearPair> pairs;
  for (NodeId id : graph.topological_order()) {
    if (graph.node(id).kind != OpKind::kLinear || graph.node(id).pass != Pass::kForward || taken.count(id)) continue;
    LinearPair pair{id, {}, id};
    NodeId at = id;
    while (true) {
      const int64_t next = sole_forward_reader(graph, at);
      if (next < 0) break;
      const auto reader = static_cast<NodeId>(next);
      const OpKind kind = graph.node(reader).kind;
      if (kind == OpKind::kLinear && !taken.count(reader)) {
        pair.second = reader;
        break;
      }
      // Only an element-wise op can run on a slice of the features and keep the pair exact.
      if (kind != OpKind::kGelu) break;
      pair.between.push_back(reader);
      at = reader;
    }
    if (pair.second == id) continue;
    taken.insert({pair.first, pair.second});
    pairs.push_back(pair);
  }
  return pairs;
}

int64_t vocabulary_head(const Graph& graph) {
  const NodeId head = graph.output().node;
  const OpNode& node = graph.node(head);
  if (node.kind != OpKind::kLinear || node.pass != Pass::kForward) return -1;
  for (const AttentionBlock& block : attention_blocks(graph)) {
    if (block.qkv == head || block.proj == head) return -1;
  }
  for (const LinearPair& pair : linear_pairs(graph)) {
    if (pair.first == head || pair.second == head) return -1;
  }
  return static_cast<int64_t>(head);
}

std::vector<int> head_degrees(const Graph& graph) {
  const std::vector<AttentionBlock> blocks = attention_blocks(graph);
  std::vector<int> degrees;
  if (blocks.empty()) return degrees;
  const int64_t heads = graph.node(blocks.front().attention).attrs.heads;
  for (int t = 1; t <= heads; ++t) {
    bool divides = true;
    for (const AttentionBlock& block : blocks) divides = divides && graph.node(block.attention).attrs.heads % t == 0;
    if (divides) degrees.push_back(t);
  }
  return degrees;
}

}  // namespace splitscope
