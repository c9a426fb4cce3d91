#include "ir/op_signature.hpp"

namespace splitscope {

std::string op_signature(const Graph& graph, NodeId id, const Slice& slice) {
  const OpNode& node = graph.node(id);
  return op_def(node.kind).signature(node, slice);
}

}  // namespace splitscope
